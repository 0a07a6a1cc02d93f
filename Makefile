# Makefile: a thin wrapper over meson. `make run` and `make test` are the README's two commands.
BUILD ?= build
SIM := $(BUILD)/sim/sim

.PHONY: all deps build run test test-long asan bench clean

all: build

deps:
	@sh .ci/install-deps

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	$(SIM) run scenarios/pools-2019.json

test: build
	meson test -C $(BUILD) --print-errorlogs

test-long: deps
	meson setup $(BUILD)-long -Dlong_tests=true 2>/dev/null || meson configure $(BUILD)-long -Dlong_tests=true
	ninja -C $(BUILD)-long && meson test -C $(BUILD)-long --print-errorlogs --suite long

asan: deps
	[ -f $(BUILD)-asan/build.ninja ] || meson setup $(BUILD)-asan -Db_sanitize=address,undefined -Db_lundef=false
	ninja -C $(BUILD)-asan && meson test -C $(BUILD)-asan --print-errorlogs

bench: build
	$(SIM) bench phold --pending 1000 --lps 1000 --events 20000000 --repeat 3
	$(SIM) bench phold --pending 16000 --lps 16000 --events 20000000 --repeat 3
	$(SIM) bench phold --pending 250000 --lps 250000 --events 20000000 --repeat 3
	$(SIM) bench scenarios --repeat 3

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-long $(BUILD)-fuzz
