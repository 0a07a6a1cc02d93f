/* rdma_rubin.c: Rubin's hardware (rdma.h): the 2018 stacks built from one set of constants, the fit of the
 * two Java/CPU constants to the channel's latency gain, and the published figures as checks. */
#include "rdma-private.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define H_NUM(field, unit_, lo, hi, dflt, text)                                                              \
  {                                                                                                          \
    .name = #field, .type = SIM_PARAM_NUMBER, .unit = unit_, .min = lo, .max = hi, .def = dflt,              \
    .offset = offsetof(SimRubinHw, field), .help = text                                                      \
  }
#define H_INT(field, unit_, lo, hi, dflt, text)                                                              \
  {                                                                                                          \
    .name = #field, .type = SIM_PARAM_INT, .unit = unit_, .min = lo, .max = hi, .def = dflt,                 \
    .offset = offsetof(SimRubinHw, field), .help = text                                                      \
  }

static const SimParamSpec rubin_hw_params[] = {
    H_NUM(gbps, "Gb/s", 1e-3, 1e6, 10, "published: Rubin's 10 Gb/s switch (rubin_2018_seed.setup)"),
    H_NUM(tcp_o_s_us, "us", 0, 1e6, 2.0,
          "assumed: kernel TCP send path; with tcp_o_r_us and tcp_L_us the ~10 us small-message one-way "
          "latency of kernel TCP (DESIGN.md reference point), split 2/3/5 as the tcp stack"),
    H_NUM(tcp_o_r_us, "us", 0, 1e6, 3.0, "assumed: kernel TCP receive path (interrupt, softirq, recv())"),
    H_NUM(tcp_L_us, "us", 0, 1e6, 5.0, "assumed: NIC, wire, switch and wake-up latency of kernel TCP"),
    H_INT(tcp_mtu_bytes, "bytes", 1, 1 << 30, 1500, "standard: Ethernet frame payload"),
    H_NUM(nic_L_us, "us", 0, 1e6, CX4_L_US,
          "derived (the NIC's per-message cost): ConnectX-4's 0.573 us (ib_send_lat 0.83 us at 32 B less "
          "the assumed verbs split); the inputs publish no ConnectX-3 figure, so the newer card's is used"),
    H_NUM(dma_ns_per_byte, "ns/B", 0, 1e6, 2 * CX4_DMA,
          "derived: ConnectX-3 is a PCIe 3.0 x8 card, half the x16 rate derived from ConnectX-4's "
          "ib_send_lat slope (14.1 GB/s), so 2 x 0.0707 ns/B"),
    H_NUM(dma_read_us, "us", 0, 1e6, CX4_DMA_READ_US,
          "derived: DMA read of a payload that is not inlined, from ConnectX-4's ib_send_lat (1.58 us at "
          "1 KiB)"),
    H_INT(inline_bytes, "bytes", 0, 1 << 20, 220, "assumed: largest inlined payload (as the rdma stacks)"),
    H_INT(roce_mtu_bytes, "bytes", 1, 1 << 30, 1024,
          "standard: RoCE on a 1500-byte Ethernet carries the largest InfiniBand MTU that fits, 1024"),
    H_NUM(g_us, "us", 0, 1e6, CX4_G_US, "published (ConnectX-4 product brief, 150 M messages/s); never binds here"),
    H_NUM(post_send_us, "us", 0, 1e6, 0.10, "assumed: CPU to post a send (as the rdma stacks)"),
    H_NUM(poll_cq_us, "us", 0, 1e6, 0.05, "assumed: CPU to reap a completion (as the rdma stacks)"),
    H_NUM(post_recv_us, "us", 0, 1e6, 0.05, "assumed: CPU to re-post a receive (as the rdma stacks)"),
    H_INT(signal_every, "", 1, 1 << 20, 16, "assumed: the channel signals one send in this many"),
    H_INT(recv_batch, "", 1, 1 << 20, 16, "assumed: the channel re-posts receives this many at a time"),
    H_NUM(plain_extra_us, "us", 0, 1e6, 0,
          "not given: CPU per message at each end that plain send/receive pays and the optimised channel does "
          "not (per-message registration, event-driven completions); the inputs name none of Rubin's "
          "optimisations and the fit's series has no plain stack, so 0"),
    H_INT(fw_copy_max_bytes, "bytes", 0, INT64_C(1) << 32, 90000,
          "bracketed by the published figures: the framework copies messages up to this size into its "
          "registered buffers and sends larger ones zero-copy (0: no copy at all); the published gain changes sign between 80 KB "
          "(copy) and 100 KB (none), the middle of that bracket"),
};

const SimParamSpec *sim_rubin_hw_params(guint *n_params) {
  if (n_params) *n_params = G_N_ELEMENTS(rubin_hw_params);
  return rubin_hw_params;
}

void sim_rubin_hw_default(SimRubinHw *hw) {
  memset(hw, 0, sizeof *hw);
  sim_params_defaults(rubin_hw_params, G_N_ELEMENTS(rubin_hw_params), hw);
}

static const char *const rubin_stack_names[SIM_RUBIN_N_STACKS] = {"tcp-nio", "rdma-plain", "rdma-channel",
                                                                  "rubin"};

const char *sim_rubin_stack_name(SimRubinStack s) {
  g_return_val_if_fail(s < SIM_RUBIN_N_STACKS, "?");
  return rubin_stack_names[s];
}

void sim_rubin_stacks(const SimRubinHw *hw, double java_us, double copy_ns_per_byte,
                      SimLogGP out[SIM_RUBIN_N_STACKS]) {
  double G = 8.0 / hw->gbps, java = java_us * 1e3;
  SimLogGP rdma = {.L_ns = hw->nic_L_us * 1e3,
                   .G_ns_per_byte = G,
                   .g_ns = hw->g_us * 1e3,
                   .dma_ns_per_byte = hw->dma_ns_per_byte,
                   .dma_read_ns = hw->dma_read_us * 1e3,
                   .inline_bytes = (uint64_t)hw->inline_bytes,
                   .mtu_bytes = (uint64_t)hw->roce_mtu_bytes};
  /* Java NIO over kernel TCP. The sender's NIO copies the whole heap buffer into a direct buffer before the
   * write() system call (serial); the kernel then copies it into socket buffers segment by segment while the
   * NIC sends (pipelined). The receiver's read loop copies each arriving chunk from the kernel into a direct
   * buffer and NIO copies it on into the heap (both pipelined with arrival, on one thread). */
  out[SIM_RUBIN_TCP] = (SimLogGP){.o_s_ns = hw->tcp_o_s_us * 1e3 + java,
                                  .o_r_ns = hw->tcp_o_r_us * 1e3 + java,
                                  .Os_ns_per_byte = copy_ns_per_byte,
                                  .Ps_ns_per_byte = copy_ns_per_byte,
                                  .Pr_ns_per_byte = 2 * copy_ns_per_byte,
                                  .L_ns = hw->tcp_L_us * 1e3,
                                  .G_ns_per_byte = G,
                                  .dma_ns_per_byte = hw->dma_ns_per_byte,
                                  .mtu_bytes = (uint64_t)hw->tcp_mtu_bytes};
  SimLogGP plain = rdma;
  plain.o_s_ns = java + (hw->post_send_us + hw->poll_cq_us + hw->plain_extra_us) * 1e3;
  plain.o_r_ns = java + (hw->poll_cq_us + hw->post_recv_us + hw->plain_extra_us) * 1e3;
  out[SIM_RUBIN_PLAIN] = plain;
  SimLogGP ch = rdma;
  ch.o_s_ns = java + (hw->post_send_us + hw->poll_cq_us / (double)hw->signal_every) * 1e3;
  ch.o_r_ns = java + (hw->poll_cq_us + hw->post_recv_us / (double)hw->recv_batch) * 1e3;
  out[SIM_RUBIN_CHANNEL] = ch;
  /* The framework copies a message into / out of its registered buffers at each end (serial), up to its
   * path switch; larger messages go zero-copy as on the channel. */
  ch.O_ns_per_byte = hw->fw_copy_max_bytes > 0 ? copy_ns_per_byte : 0; /* 0: no copy at any size */
  ch.O_max_bytes = (uint64_t)hw->fw_copy_max_bytes;
  out[SIM_RUBIN_FRAMEWORK] = ch;
}

const uint64_t SIM_RUBIN_FIT_SIZES[SIM_RUBIN_FIT_N] = {1024, 4096, 16384, 32768, 65536, 102400};

static double rubin_channel_gain(const SimRubinHw *hw, double java_us, double copy, uint64_t bytes) {
  SimLogGP st[SIM_RUBIN_N_STACKS];
  sim_rubin_stacks(hw, java_us, copy, st);
  return 1 - sim_loggp_one_way_ns(&st[SIM_RUBIN_CHANNEL], bytes) / sim_loggp_one_way_ns(&st[SIM_RUBIN_TCP], bytes);
}

typedef struct {
  const SimRubinHw *hw;
  double target, sigma;
} RubinFitData;

static int rubin_fit_f(const gsl_vector *x, void *data, gsl_vector *f) {
  const RubinFitData *d = data;
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    double g = rubin_channel_gain(d->hw, gsl_vector_get(x, 0), gsl_vector_get(x, 1), SIM_RUBIN_FIT_SIZES[i]);
    gsl_vector_set(f, i, (g - d->target) / d->sigma);
  }
  return GSL_SUCCESS;
}

gboolean sim_rubin_fit(const SimRubinHw *hw, SimRubinFit *out, GError **error) {
  g_return_val_if_fail(hw != NULL && out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  RubinFitData d = {.hw = hw,
                    .target = (SIM_RUBIN_GAIN_LO + SIM_RUBIN_GAIN_HI) / 2,
                    .sigma = (SIM_RUBIN_GAIN_HI - SIM_RUBIN_GAIN_LO) / 2 / sqrt(3)};
  gsl_multifit_nlinear_fdf fdf = {.f = rubin_fit_f, .df = NULL, .fvv = NULL, .n = SIM_RUBIN_FIT_N, .p = 2,
                                  .params = &d};
  gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
  gsl_multifit_nlinear_workspace *w =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, SIM_RUBIN_FIT_N, 2);
  double x0_data[2] = {1.0, 0.1}; /* 1 µs, 0.1 ns/B: a start, not an answer */
  gsl_vector_view x0 = gsl_vector_view_array(x0_data, 2);
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int info = 0;
  int status = gsl_multifit_nlinear_init(&x0.vector, &fdf, w);
  if (status == GSL_SUCCESS) status = gsl_multifit_nlinear_driver(200, 1e-12, 1e-12, 1e-12, NULL, NULL, &info, w);
  gboolean ok = status == GSL_SUCCESS;
  if (ok) {
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_matrix *cov = gsl_matrix_alloc(2, 2);
    gsl_multifit_nlinear_covar(J, 0.0, cov);
    out->java_us = gsl_vector_get(w->x, 0);
    out->copy_ns_per_byte = gsl_vector_get(w->x, 1);
    out->java_us_se = sqrt(gsl_matrix_get(cov, 0, 0));
    out->copy_ns_per_byte_se = sqrt(gsl_matrix_get(cov, 1, 1));
    out->correlation = gsl_matrix_get(cov, 0, 1) / (out->java_us_se * out->copy_ns_per_byte_se);
    gsl_matrix_free(cov);
    out->iterations = (guint)gsl_multifit_nlinear_niter(w);
  }
  gsl_set_error_handler(old);
  gsl_multifit_nlinear_free(w);
  if (!ok) {
    g_set_error(error, SIM_BFT_ERROR, SIM_BFT_ERROR_FIT, "the fit did not converge: %s", gsl_strerror(status));
    return FALSE;
  }
  if (!(out->java_us >= 0 && out->java_us <= 1e3 && out->copy_ns_per_byte >= 0 && out->copy_ns_per_byte <= 100)) {
    g_set_error(error, SIM_BFT_ERROR, SIM_BFT_ERROR_FIT,
                "the fit left its bounds: java_us %g (expected [0, 1000]), copy_ns_per_byte %g (expected [0, 100])",
                out->java_us, out->copy_ns_per_byte);
    return FALSE;
  }
  out->target = d.target;
  out->sigma = d.sigma;
  out->dof = SIM_RUBIN_FIT_N - 2;
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    out->model_gain[i] = rubin_channel_gain(hw, out->java_us, out->copy_ns_per_byte, SIM_RUBIN_FIT_SIZES[i]);
    out->residual[i] = out->model_gain[i] - d.target;
    out->chi2 += (out->residual[i] / d.sigma) * (out->residual[i] / d.sigma);
  }
  return TRUE;
}

static void add_check(SimRubinCheck *out, guint *n, const char *what, const char *published, uint64_t bytes,
                      double value, double lo, double hi) {
  g_assert(*n < SIM_RUBIN_MAX_CHECKS);
  double mid = (lo + hi) / 2;
  out[(*n)++] = (SimRubinCheck){.what = what,
                                .published = published,
                                .bytes = bytes,
                                .value = value,
                                .lo = lo,
                                .hi = hi,
                                .holds = value >= lo && value <= hi,
                                .has_direction = hi < 1,
                                .sign_holds = hi < 1 && (mid > 0 ? value > 0 : value < 0)};
}

/* One request alone on n = 4 (latency, µs) or 8 clients under load (throughput, requests per second). */
static double rubin_bft(const SimLogGP *lg, uint64_t payload, gboolean loaded) {
  SimBftConfig cfg;
  sim_bft_config_default(&cfg);
  cfg.payload_bytes = payload;
  if (loaded) {
    cfg.requests = 25;
  } else {
    cfg.clients = cfg.requests = cfg.batch = 1;
  }
  SimBftResult r;
  gboolean ok = sim_bft_run(lg, &cfg, &r, NULL);
  g_assert(ok);
  return loaded ? r.throughput_rps : r.latency_mean_us;
}

guint sim_rubin_checks(const SimLogGP st[SIM_RUBIN_N_STACKS], SimRubinCheck *out) {
  guint n = 0;
  const SimLogGP *tcp = &st[SIM_RUBIN_TCP], *plain = &st[SIM_RUBIN_PLAIN], *ch = &st[SIM_RUBIN_CHANNEL],
                 *fw = &st[SIM_RUBIN_FRAMEWORK];
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    uint64_t m = SIM_RUBIN_FIT_SIZES[i];
    add_check(out, &n, "channel vs tcp-nio, throughput gain", "33-43% higher", m,
              sim_loggp_gain(ch, tcp, m).throughput, SIM_RUBIN_GAIN_LO, SIM_RUBIN_GAIN_HI);
  }
  static const uint64_t small[] = {1024, 4096, 8192};
  for (guint i = 0; i < G_N_ELEMENTS(small); i++)
    add_check(out, &n, "channel vs rdma-plain, latency gain", "30% lower for messages < 16 KB", small[i],
              sim_loggp_gain(ch, plain, small[i]).latency, 0.295, 0.305);
  for (guint i = 0; i < G_N_ELEMENTS(small); i++)
    add_check(out, &n, "channel vs rdma-plain, throughput gain", "30% higher", small[i],
              sim_loggp_gain(ch, plain, small[i]).throughput, 0.295, 0.305);
  static const uint64_t fw_sizes[] = {1000, 100000, 20000, 40000, 60000, 80000};
  for (guint i = 0; i < G_N_ELEMENTS(fw_sizes); i++) {
    uint64_t m = fw_sizes[i];
    gboolean mid = m >= 20000 && m <= 80000;
    double gain = 1 - rubin_bft(fw, m, FALSE) / rubin_bft(tcp, m, FALSE);
    if (mid)
      add_check(out, &n, "rubin vs tcp-nio in PBFT (n 4), latency gain", "20% higher latency at 20-80 KB", m,
                gain, -0.205, -0.195);
    else
      add_check(out, &n, "rubin vs tcp-nio in PBFT (n 4), latency gain", "19-20% lower at 1 KB and 100 KB", m,
                gain, 0.19, 0.20);
  }
  static const uint64_t tp_sizes[] = {1000, 100000};
  for (guint i = 0; i < G_N_ELEMENTS(tp_sizes); i++)
    add_check(out, &n, "rubin vs tcp-nio in PBFT (n 4), throughput gain", "25-38% higher", tp_sizes[i],
              rubin_bft(fw, tp_sizes[i], TRUE) / rubin_bft(tcp, tp_sizes[i], TRUE) - 1, 0.25, 0.38);
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    uint64_t m = SIM_RUBIN_FIT_SIZES[i];
    add_check(out, &n, "tcp-nio: copies' share of one-way latency", "> 50% (Frey et al. ICDCS'09)", m,
              sim_loggp_one_way_copy_ns(tcp, m) / sim_loggp_one_way_ns(tcp, m), 0.5, 1.0);
  }
  return n;
}
