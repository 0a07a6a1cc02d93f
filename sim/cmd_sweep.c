/* cmd_sweep.c: `sim sweep`: runs a study's points × replicates as child `sim run` processes (local jobs,
 * shards of a cluster job, or MPI ranks), resumes, and merges the complete runs into the tidy table. */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef SIM_HAVE_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "input.h"
#include "output.h"
#include "sweep.h"

extern char **environ;

/* Set by the signal handler, polled by the run loop (a signal handler can reach nothing else). */
static volatile sig_atomic_t sweep_interrupted;

static void on_signal(int sig) {
  (void)sig;
  sweep_interrupted = 1;
}

typedef struct {
  char *out_dir;
  int jobs;
  char *shard;
  gboolean dry_run, merge_only, quiet;
  guint shard_i, shard_n;
  gboolean mpi;
  gboolean speak; /* print validation problems and the table report (rank 0, or no MPI) */
} SweepOpts;

/* The command line's part of SweepOpts (out_dir to quiet). */
static const SimOpt sweep_opts[] = {
    SIM_OPT_OUT(SweepOpts, out_dir, "Results directory (default results/<name>)", "DIR"),
    {.name = "jobs", .short_name = 'j', .type = SIM_OPT_INT, .offset = offsetof(SweepOpts, jobs),
     .help = "Runs at a time (default: the number of processors)", .arg = "N", .range = "[1, 2147483647]",
     .min = 1, .max = G_MAXINT},
    {.name = "shard", .type = SIM_OPT_STRING, .offset = offsetof(SweepOpts, shard),
     .help = "Run only the runs whose index % N is i; 'mpi' takes i and N from the MPI rank and size",
     .arg = "i/N"},
    {.name = "dry-run", .short_name = 'n', .type = SIM_OPT_FLAG, .offset = offsetof(SweepOpts, dry_run),
     .help = "List the runs and their commands; run nothing"},
    {.name = "merge-only", .type = SIM_OPT_FLAG, .offset = offsetof(SweepOpts, merge_only),
     .help = "Only rebuild the table from the complete runs"},
    SIM_OPT_QUIET(SweepOpts, quiet, "No progress line and no report"),
};

static void sweep_opts_clear(SweepOpts *o) {
  sim_cli_options_clear(sweep_opts, G_N_ELEMENTS(sweep_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SweepOpts, sweep_opts_clear)

static void json_free(gpointer p) {
  json_decref(p);
}

/* Under MPI, the worst exit code of all ranks (so that every rank takes the same path); else `rc`. */
static int agree(const SweepOpts *o, int rc) {
#ifdef SIM_HAVE_MPI
  if (o->mpi) {
    int all = rc;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
  }
#else
  (void)o;
#endif
  return rc;
}

/* "i/N" with 0 <= i < N, or "mpi". */
static gboolean parse_shard(const char *spec, SweepOpts *o, char **msg) {
  if (strcmp(spec, "mpi") == 0) {
#ifdef SIM_HAVE_MPI
    o->mpi = TRUE;
    return TRUE;
#else
    *msg = g_strdup("--shard mpi: this sim was built without MPI (meson setup -Dmpi=enabled)");
    return FALSE;
#endif
  }
  guint64 i = 0, n = 0;
  char *end = NULL;
  const char *slash = strchr(spec, '/');
  if (!slash || !g_ascii_isdigit(spec[0]) || !g_ascii_isdigit(slash[1]) ||
      (i = g_ascii_strtoull(spec, &end, 10), end != slash) ||
      (n = g_ascii_strtoull(slash + 1, &end, 10), *end) || n > G_MAXUINT) {
    *msg = g_strdup_printf("--shard %s: expected i/N (e.g. 0/10) or mpi", spec);
    return FALSE;
  }
  if (n < 1 || i >= n) {
    *msg = n < 1 ? g_strdup_printf("--shard %s: N must be >= 1", spec)
                 : g_strdup_printf("--shard %s: i must be in [0, %" G_GUINT64_FORMAT ")", spec, n);
    return FALSE;
  }
  o->shard_i = (guint)i;
  o->shard_n = (guint)n;
  return TRUE;
}

static gboolean run_is_mine(const SimSweep *sw, const SweepOpts *o, guint p, guint r) {
  guint64 k = (guint64)p * sim_sweep_n_replicates(sw) + r;
  return k % o->shard_n == o->shard_i;
}

static char *run_dir(const char *dir, guint p, guint r) {
  g_autofree char *name = sim_sweep_run_name(p, r);
  return g_build_filename(dir, "runs", name, NULL);
}

static gboolean run_complete(const char *dir, guint p, guint r) {
  g_autofree char *d = run_dir(dir, p, r);
  g_autofree char *s = g_build_filename(d, "summary.json", NULL);
  return g_file_test(s, G_FILE_TEST_IS_REGULAR);
}

/* DIR/sweep.json, or NULL (with *absent set when there is none). Exit code in *rc on a bad one. */
static json_t *load_manifest(const char *dir, gboolean *absent, GError **error) {
  g_autofree char *f = g_build_filename(dir, "sweep.json", NULL);
  *absent = !g_file_test(f, G_FILE_TEST_EXISTS);
  if (*absent) return NULL;
  /* jansson reads a directory as an empty file. */
  if (!g_file_test(f, G_FILE_TEST_IS_REGULAR)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not a regular file", f);
    return NULL;
  }
  SimInputProblem pb;
  g_autoptr(GError) ie = NULL;
  g_autofree char *t = NULL;
  json_t *m = sim_json_load_file(f, 0, SIM_JSON_BLANK_AS_SYNTAX, &pb, &ie);
  if (m) return m;
  if (ie->code == SIM_INPUT_ERROR_OPEN || ie->code == SIM_INPUT_ERROR_READ)
    /* In the words of json_load_file(), which this reader used. */
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:1:1: unable to open %s: %s", f, f, g_strerror(pb.err_no));
  else
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s", (t = sim_input_error_text(f, ie)));
  return NULL;
}

/* Checks that DIR is new or holds the same study, and (unless dry) records the sweep in DIR/sweep.json. */
static int prepare_dir(const char *dir, const SimSweep *sw, const char *sweep_file, gboolean dry,
                       const SweepOpts *o) {
  gboolean absent = FALSE;
  g_autoptr(GError) e = NULL;
  g_autoptr(json_t) old = load_manifest(dir, &absent, &e);
  if (!absent && !old) {
    if (o->speak) fprintf(stderr, "sim sweep: %s\n", e->message);
    return SIM_EXIT_USAGE;
  }
  if (old && !sim_sweep_manifest_same_study(old, sim_sweep_manifest(sw))) {
    if (o->speak)
      fprintf(stderr,
              "sim sweep: %s holds results of a different sweep (its sweep.json does not match %s); "
              "use another --out\n",
              dir, sweep_file);
    return SIM_EXIT_USAGE;
  }
  if (absent) {
    /* Only a sweep's own directory is written into: a directory with other files is never touched. */
    GDir *d = g_dir_open(dir, 0, NULL);
    gboolean other = g_file_test(dir, G_FILE_TEST_EXISTS) && (!d || g_dir_read_name(d) != NULL);
    if (d) g_dir_close(d);
    if (other) {
      if (o->speak)
        fprintf(stderr,
                "sim sweep: %s: not empty and has no sweep.json: not a sweep results directory; nothing in it "
                "was touched: use another --out\n",
                dir);
      return SIM_EXIT_USAGE;
    }
  }
  if (dry || (old && json_equal(old, (json_t *)sim_sweep_manifest(sw)))) return SIM_EXIT_OK;
  g_autofree char *path = g_build_filename(dir, "sweep.json", NULL);
  g_autoptr(SimOutFile) out = sim_outfile_open(path, &e);
  if (!out || !sim_output_dump_json(sim_outfile_stream(out), sim_sweep_manifest(sw)) ||
      !sim_outfile_commit(out, &e)) {
    fprintf(stderr, "sim sweep: %s\n", e ? e->message : path);
    return SIM_EXIT_USAGE;
  }
  return SIM_EXIT_OK;
}

/* Removes this shard's leftovers in DIR/runs: temp directories of interrupted runs, and run directories
 * without summary.json. Other shards' files are left alone: they may be running now. */
static void clean_runs(const char *dir, const SimSweep *sw, const SweepOpts *o) {
  g_autofree char *runs = g_build_filename(dir, "runs", NULL);
  GDir *d = g_dir_open(runs, 0, NULL);
  if (!d) return;
  g_autoptr(GPtrArray) doomed = g_ptr_array_new_with_free_func(g_free);
  const char *n;
  while ((n = g_dir_read_name(d))) {
    guint p = 0, r = 0;
    int used = 0;
    gboolean tmp = n[0] == '.';
    if (sscanf(n + tmp, "p%u-r%u%n", &p, &r, &used) != 2) continue;
    g_autofree char *canon = sim_sweep_run_name(p, r);
    if (strncmp(n + tmp, canon, (size_t)used) != 0 || strlen(canon) != (size_t)used) continue;
    if (p >= sim_sweep_n_points(sw) || r >= sim_sweep_n_replicates(sw) || !run_is_mine(sw, o, p, r)) continue;
    if (tmp ? g_str_has_prefix(n + 1 + used, ".tmp-") : n[used] == '\0' && !run_complete(dir, p, r))
      g_ptr_array_add(doomed, g_build_filename(runs, n, NULL));
  }
  g_dir_close(d);
  for (guint i = 0; i < doomed->len; i++)
    sim_output_remove_tree(g_ptr_array_index(doomed, i));
}

/* The argv of one run (NULL-terminated; g_strfreev). */
static char **run_argv(const char *exe, const SimSweep *sw, guint p, guint r, const char *out) {
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, g_strdup(exe));
  g_ptr_array_add(a, g_strdup("run"));
  g_ptr_array_add(a, g_strdup(sim_sweep_base_file(sw)));
  for (const char *const *s = sim_sweep_point_sets(sw, p); *s; s++) {
    g_ptr_array_add(a, g_strdup("--set"));
    g_ptr_array_add(a, g_strdup(*s));
  }
  g_ptr_array_add(a, g_strdup("--seed"));
  g_ptr_array_add(a, g_strdup_printf("%" G_GUINT64_FORMAT, sim_sweep_run_seed(sw, p, r)));
  g_ptr_array_add(a, g_strdup("--out"));
  g_ptr_array_add(a, g_strdup(out));
  /* The runs fill the processors (--jobs); one relay thread each. */
  g_ptr_array_add(a, g_strdup("--threads"));
  g_ptr_array_add(a, g_strdup("1"));
  g_ptr_array_add(a, g_strdup("--quiet"));
  g_ptr_array_add(a, NULL);
  return (char **)g_ptr_array_free(a, FALSE);
}

static char *shell_line(char **argv) {
  GString *s = g_string_new(NULL);
  for (char **a = argv; *a; a++) {
    gboolean plain = **a != '\0';
    for (const char *c = *a; *c && plain; c++)
      plain = g_ascii_isalnum(*c) || strchr("-_./=:,+@%", *c);
    g_autofree char *q = plain ? g_strdup(*a) : g_shell_quote(*a);
    g_string_append_printf(s, "%s%s", a == argv ? "" : " ", q);
  }
  return g_string_free(s, FALSE);
}

typedef struct {
  pid_t pid;
  guint p, r;
  char *tmp; /* the run's temp output directory */
} Child;

/* Starts `sim run` for (p, r) with its output in TMP/result, TMP a fresh temp directory beside the final one that
 * also holds the run's stderr.log (and the run's own staging directory and lock). */
static gboolean start_run(const char *exe, const char *dir, const SimSweep *sw, guint p, guint r, Child *c,
                          GError **error) {
  g_autofree char *name = sim_sweep_run_name(p, r);
  g_autofree char *tmpl = g_strdup_printf(".%s.tmp-XXXXXX", name);
  g_autofree char *runs = g_build_filename(dir, "runs", NULL);
  c->tmp = g_build_filename(runs, tmpl, NULL);
  if (g_mkdir_with_parents(runs, 0777) != 0 || !g_mkdtemp_full(c->tmp, 0777)) {
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot create a directory in %s: %s", runs,
                g_strerror(e));
    return FALSE;
  }
  g_autofree char *err_log = g_build_filename(c->tmp, "stderr.log", NULL);
  g_autofree char *result = g_build_filename(c->tmp, "result", NULL);
  g_auto(GStrv) argv = run_argv(exe, sw, p, r, result);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_init(&at);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
  int rc = posix_spawn(&c->pid, exe, &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  c->p = p;
  c->r = r;
  if (rc != 0) {
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(rc), "cannot start %s: %s", exe, g_strerror(rc));
    return FALSE;
  }
  return TRUE;
}

/* A finished child: moves a good run into place; reports a failed one. Returns 0, 1 (failed) or 130. */
static int finish_run(const char *dir, Child *c, int status) {
  g_autofree char *name = sim_sweep_run_name(c->p, c->r);
  g_autofree char *final = run_dir(dir, c->p, c->r);
  g_autofree char *err_log = g_build_filename(c->tmp, "stderr.log", NULL);
  g_autofree char *errs = NULL;
  g_file_get_contents(err_log, &errs, NULL, NULL);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  int result_code = 0;
  if (code == 0) {
    g_autofree char *result = g_build_filename(c->tmp, "result", NULL);
    g_autofree char *kept_log = g_build_filename(result, "stderr.log", NULL);
    if (errs && *errs) g_rename(err_log, kept_log); /* warnings stay with the run */
    /* A run that succeeded with warnings (it runs with --quiet, which keeps them) still says them here; they
     * also stay in its stderr.log. */
    g_auto(GStrv) lines = g_strsplit(errs ? errs : "", "\n", -1);
    for (char **l = lines; *l; l++)
      if (**l) fprintf(stderr, "sim sweep: run %s: %s\n", name, *l);
    if (g_rename(result, final) != 0) {
      int e = errno;
      if (!run_complete(dir, c->p, c->r)) { /* else another process finished the same run: same bytes */
        fprintf(stderr, "sim sweep: run %s: cannot rename %s to %s: %s\n", name, result, final, g_strerror(e));
        result_code = 1;
      }
    }
    sim_output_remove_tree(c->tmp);
  } else {
    if (code == SIM_EXIT_INTERRUPTED || (WIFSIGNALED(status) && sweep_interrupted)) {
      result_code = SIM_EXIT_INTERRUPTED;
    } else {
      g_autofree char *msg = g_strstrip(g_strdup(errs ? errs : ""));
      fprintf(stderr, "sim sweep: run %s failed (exit %d)%s%s\n", name, code, *msg ? ": " : "", msg);
      result_code = 1;
    }
    sim_output_remove_tree(c->tmp);
  }
  g_clear_pointer(&c->tmp, g_free);
  return result_code;
}

static void progress(const SweepOpts *o, guint done, guint total, guint failed) {
  if (o->quiet || !isatty(STDERR_FILENO)) return;
  fprintf(stderr, "\r\033[K[sweep] %u/%u runs", done, total);
  if (failed) fprintf(stderr, " (%u failed)", failed);
  fflush(stderr);
}

/* Runs this shard's incomplete runs with up to o->jobs children. Returns 0, 1 (some failed) or 130. */
static int run_all(const char *dir, const SimSweep *sw, const SweepOpts *o, guint *n_mine, guint *n_ran,
                   guint *n_skipped, guint *n_failed) {
  g_autoptr(GArray) todo = g_array_new(FALSE, FALSE, sizeof(guint) * 2);
  *n_mine = *n_ran = *n_skipped = *n_failed = 0;
  for (guint p = 0; p < sim_sweep_n_points(sw); p++)
    for (guint r = 0; r < sim_sweep_n_replicates(sw); r++) {
      if (!run_is_mine(sw, o, p, r)) continue;
      (*n_mine)++;
      if (run_complete(dir, p, r)) {
        (*n_skipped)++;
        continue;
      }
      guint pr[2] = {p, r};
      g_array_append_val(todo, pr);
    }
  if (todo->len == 0) return SIM_EXIT_OK;
  g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
  if (!exe) {
    fprintf(stderr, "sim sweep: cannot find the sim binary (/proc/self/exe)\n");
    return SIM_EXIT_RUNTIME;
  }

  struct sigaction old[3];
  /* No SA_RESTART: waitpid() must return on a signal so the children can be told. */
  sim_cli_signals_catch(on_signal, old);

  g_autofree Child *kids = g_new0(Child, (gsize)o->jobs);
  guint running = 0, next = 0, done = 0;
  gboolean told = FALSE, interrupted = FALSE;
  progress(o, done, todo->len, *n_failed);
  while (next < todo->len || running > 0) {
    while (!sweep_interrupted && running < (guint)o->jobs && next < todo->len) {
      const guint *pr = &g_array_index(todo, guint, 2 * next);
      next++;
      Child *c = NULL;
      for (int k = 0; k < o->jobs && !c; k++)
        if (!kids[k].pid) c = &kids[k];
      g_autoptr(GError) e = NULL;
      if (!start_run(exe, dir, sw, pr[0], pr[1], c, &e)) {
        g_autofree char *name = sim_sweep_run_name(pr[0], pr[1]);
        fprintf(stderr, "sim sweep: run %s failed: %s\n", name, e->message);
        if (c->tmp) sim_output_remove_tree(c->tmp);
        g_clear_pointer(&c->tmp, g_free);
        c->pid = 0;
        (*n_failed)++;
        done++;
        continue;
      }
      running++;
    }
    if (running == 0) break;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno != EINTR) {
        fprintf(stderr, "sim sweep: waitpid: %s\n", g_strerror(errno));
        break;
      }
      if (sweep_interrupted && !told) {
        for (int k = 0; k < o->jobs; k++)
          if (kids[k].pid) kill(kids[k].pid, SIGTERM);
        told = TRUE;
      }
      continue;
    }
    Child *c = NULL;
    for (int k = 0; k < o->jobs && !c; k++)
      if (kids[k].pid == pid) c = &kids[k];
    if (!c) continue;
    int res = finish_run(dir, c, status);
    c->pid = 0;
    running--;
    done++;
    if (res == 0) (*n_ran)++;
    if (res == 1) (*n_failed)++;
    if (res == SIM_EXIT_INTERRUPTED) interrupted = TRUE;
    progress(o, done, todo->len, *n_failed);
  }
  if (!o->quiet && isatty(STDERR_FILENO)) fputc('\n', stderr);
  sim_cli_signals_restore(old);
  if (interrupted || sweep_interrupted) return SIM_EXIT_INTERRUPTED;
  return *n_failed ? SIM_EXIT_RUNTIME : SIM_EXIT_OK;
}

/* Builds the table from the complete runs in `dirs` and writes it into `out`. */
static int write_table(const SimSweep *sw, const char *const *dirs, guint n_dirs, const char *out,
                       const SweepOpts *o) {
  g_autoptr(SimSweepTable) t = sim_sweep_table_new(sw);
  g_autoptr(GError) e = NULL;
  guint n = 0;
  /* A summary that does not parse was damaged after its run wrote it atomically: bad input. */
  if (!sim_sweep_table_collect(t, dirs, n_dirs, &n, &e)) {
    fprintf(stderr, "sim sweep: %s\n", e->message);
    return SIM_EXIT_USAGE;
  }
  if (!sim_sweep_table_write(t, out, &e)) {
    fprintf(stderr, "sim sweep: %s\n", e->message);
    return SIM_EXIT_RUNTIME;
  }
  g_auto(GStrv) unmatched = sim_sweep_table_unmatched_metrics(t);
  for (char **m = unmatched; n && *m; m++)
    fprintf(stderr, "sim sweep: metric \"%s\" is in no run's summary\n", *m);
  if (!o->quiet)
    printf("wrote %s/table.csv and %s/table.json: %u points, %u of %u runs complete\n", out, out,
           sim_sweep_n_points(sw), n, sim_sweep_n_runs(sw));
  return SIM_EXIT_OK;
}

static int dry_run(const char *dir, const SimSweep *sw, const SweepOpts *o) {
  guint todo = 0, done = 0;
  for (guint p = 0; p < sim_sweep_n_points(sw); p++)
    for (guint r = 0; r < sim_sweep_n_replicates(sw); r++) {
      if (!run_is_mine(sw, o, p, r)) continue;
      gboolean complete = run_complete(dir, p, r);
      g_autofree char *name = sim_sweep_run_name(p, r);
      g_autofree char *final = run_dir(dir, p, r);
      g_auto(GStrv) argv = run_argv("sim", sw, p, r, final);
      g_autofree char *line = shell_line(argv);
      printf("%s %s %s\n", name, complete ? "complete" : "todo", line);
      if (complete)
        done++;
      else
        todo++;
    }
  printf("%u runs to do, %u complete (shard %u/%u of %u runs)\n", todo, done, o->shard_i, o->shard_n,
         sim_sweep_n_runs(sw));
  return SIM_EXIT_OK;
}

/* `sim sweep SWEEP.json ...` once options are known; `rank`/`size` come from --shard or MPI. */
static int sweep_file_main(const char *file, SweepOpts *o) {
  g_autoptr(SimDiag) diag = sim_diag_new(file);
  g_autoptr(SimSweep) sw = sim_sweep_load_file(file, diag);
  if (agree(o, sw ? SIM_EXIT_OK : SIM_EXIT_USAGE) != SIM_EXIT_OK) {
    if (!sw && o->speak) {
      g_autofree char *msgs = sim_diag_join(diag);
      fprintf(stderr, "%s\n", msgs);
    }
    return SIM_EXIT_USAGE;
  }
  g_autofree char *dir =
      o->out_dir ? g_strdup(o->out_dir) : g_build_filename("results", sim_sweep_name(sw), NULL);
  if (o->merge_only) {
    if (!o->speak) return SIM_EXIT_OK;
    gboolean absent = FALSE;
    g_autoptr(GError) e = NULL;
    g_autoptr(json_t) old = load_manifest(dir, &absent, &e);
    if (absent) {
      fprintf(stderr, "sim sweep: %s has no sweep.json: not a sweep results directory\n", dir);
      return SIM_EXIT_USAGE;
    }
    int rc = prepare_dir(dir, sw, file, TRUE, o);
    if (rc) return rc;
    const char *dirs[] = {dir};
    return write_table(sw, dirs, 1, dir, o);
  }
  int rc = agree(o, prepare_dir(dir, sw, file, o->dry_run, o));
  if (rc) return rc;
  if (o->dry_run) return dry_run(dir, sw, o);
  clean_runs(dir, sw, o);
  guint mine, ran, skipped, failed;
  int run_rc = run_all(dir, sw, o, &mine, &ran, &skipped, &failed);
  if (!o->quiet)
    printf(
        "sweep %s: %u points x %u replicates = %u runs; shard %u/%u: %u runs, %u ran, %u already complete, "
        "%u failed\n",
        sim_sweep_name(sw), sim_sweep_n_points(sw), sim_sweep_n_replicates(sw), sim_sweep_n_runs(sw),
        o->shard_i, o->shard_n, mine, ran, skipped, failed);
  fflush(stdout);
  run_rc = agree(o, run_rc);
  if (run_rc == SIM_EXIT_INTERRUPTED) {
    if (o->speak) fprintf(stderr, "sim sweep: interrupted; complete runs are kept, rerun to resume\n");
    return SIM_EXIT_INTERRUPTED;
  }
  if (o->speak) {
    fflush(stdout);
    const char *dirs[] = {dir};
    int trc = write_table(sw, dirs, 1, dir, o);
    if (trc) return trc;
  }
  return run_rc;
}

/* `sim sweep merge DIR...`. */
static int merge_main(char **dirs, guint n_dirs, const SweepOpts *o) {
  g_autoptr(GPtrArray) ms = g_ptr_array_new_with_free_func(json_free);
  for (guint i = 0; i < n_dirs; i++) {
    gboolean absent = FALSE;
    g_autoptr(GError) e = NULL;
    json_t *m = load_manifest(dirs[i], &absent, &e);
    if (absent) {
      fprintf(stderr, "sim sweep merge: %s has no sweep.json: not a sweep results directory\n", dirs[i]);
      return SIM_EXIT_USAGE;
    }
    if (!m) {
      fprintf(stderr, "sim sweep merge: %s\n", e->message);
      return SIM_EXIT_USAGE;
    }
    g_ptr_array_add(ms, m);
    if (i && !sim_sweep_manifest_same_study(g_ptr_array_index(ms, 0), m)) {
      fprintf(stderr, "sim sweep merge: %s holds results of a different sweep than %s\n", dirs[i], dirs[0]);
      return SIM_EXIT_USAGE;
    }
  }
  g_autoptr(GError) e = NULL;
  g_autofree char *what = g_build_filename(dirs[0], "sweep.json", NULL);
  g_autoptr(SimSweep) sw = sim_sweep_from_manifest(g_ptr_array_index(ms, 0), what, &e);
  if (!sw) {
    fprintf(stderr, "sim sweep merge: %s\n", e->message);
    return SIM_EXIT_USAGE;
  }
  const char *out = o->out_dir ? o->out_dir : dirs[0];
  gboolean listed = FALSE;
  for (guint i = 0; i < n_dirs; i++)
    listed = listed || strcmp(dirs[i], out) == 0;
  if (!listed) {
    int rc = prepare_dir(out, sw, what, FALSE, o);
    if (rc) return rc;
  }
  return write_table(sw, (const char *const *)dirs, n_dirs, out, o);
}

int sim_cmd_sweep(int argc, char **argv) {
  g_auto(SweepOpts) o = {.jobs = -1, .shard_n = 1, .speak = TRUE};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("SWEEP.json | merge DIR... - run a study over many runs");
  g_option_context_set_strict_posix(ctx, FALSE);
  sim_cli_add_options(ctx, sweep_opts, G_N_ELEMENTS(sweep_opts), &o);
  g_option_context_set_description(
      ctx,
      "Runs every point (the Cartesian product of the sweep's parameters) x replicate of a base scenario as\n"
      "'sim run BASE --set ... --seed SEED --out DIR/runs/pP-rR --quiet', each into a temp directory "
      "renamed\n"
      "into place when complete, and writes the tidy table DIR/table.csv and DIR/table.json, one row per\n"
      "point with the columns point, the parameter columns, replicates, then KEY:mean, KEY:sd and KEY:ci95\n"
      "per metric (ci95: the half-width of the 95% Student-t interval). Rerunning the same command resumes:\n"
      "complete runs are skipped.\n\n"
      "  sim sweep s.json --out DIR --shard 3/10       one shard of a cluster job (same DIR or one each)\n"
      "  sim sweep merge DIR... [--out OUT] [--quiet]  the table from the complete runs of several DIRs\n"
      "                                                (the other options do not apply)\n"
      "  mpirun -np 8 sim sweep s.json --out DIR --shard mpi   (with a build configured -Dmpi=enabled)\n\n"
      "The sweep file format, the generators and the seed derivation are in docs/studies.md (Studies).\n"
      "Exit codes: 0 ok, 1 a run failed (the others still ran), 2 bad usage or input, 130 interrupted.");
  if (!sim_cli_parse(ctx, "sweep", &argc, &argv)) return SIM_EXIT_USAGE;
  /* "DIR/" and "DIR" are the same directory; messages name it once. */
  for (gsize n = o.out_dir ? strlen(o.out_dir) : 0; n > 1 && o.out_dir[n - 1] == '/'; n--)
    o.out_dir[n - 1] = '\0';
  gboolean merge = argc >= 2 && strcmp(argv[1], "merge") == 0;
  if (merge) {
    if (argc < 3) return sim_cli_usage_error("sweep", "merge: missing DIR");
    if (o.shard || o.jobs != -1 || o.dry_run || o.merge_only)
      return sim_cli_usage_error("sweep", "merge takes only --out and --quiet");
    return merge_main(argv + 2, (guint)(argc - 2), &o);
  }
  if (argc != 2)
    return sim_cli_usage_error("sweep", argc < 2 ? "missing SWEEP.json" : "expected one SWEEP.json");
  if (o.jobs == -1) o.jobs = (int)MAX(1u, g_get_num_processors());
  if (!sim_cli_check_ranges("sweep", sweep_opts, G_N_ELEMENTS(sweep_opts), &o)) return SIM_EXIT_USAGE;
  if (o.shard) {
    g_autofree char *msg = NULL;
    if (!parse_shard(o.shard, &o, &msg)) return sim_cli_usage_error("sweep", "%s", msg);
  }
#ifdef SIM_HAVE_MPI
  if (o.mpi) {
    int rank = 0, size = 1;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    o.shard_i = (guint)rank;
    o.shard_n = (guint)size;
    o.speak = rank == 0;
    int rc = sweep_file_main(argv[1], &o);
    MPI_Finalize();
    return rc;
  }
#endif
  return sweep_file_main(argv[1], &o);
}
