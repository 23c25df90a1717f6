#include "trainer.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "bandwidth.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/json_text.hpp"
#include "ezpz/launchers/runtime_env.hpp"
#include "ezpz/runtime/dist.hpp"
#include "ezpz/runtime/grad_sync.hpp"
#include "ezpz/runtime/stamp.hpp"
#include "ezpz/smoke/report.hpp"

namespace ezpz::smoke {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using report::StepRecord;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// libtorch sizes its own pool but not OpenBLAS's, which starts a thread per
// core in every rank: 2 ranks x 2 threads on 2 cores thrash. Looked up at run
// time because the BLAS behind libblas.so.3 may not be OpenBLAS.
void set_threads(int threads) {
  torch::set_num_threads(threads);
  using SetThreads = void (*)(int);
  void* symbol = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  if (symbol) reinterpret_cast<SetThreads>(symbol)(threads);
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string without_backtrace(const std::exception& error) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&error)) {
    return c10->what_without_backtrace();
  }
  return error.what();
}

torch::nn::Sequential build_model(const SmokeOptions& o) {
  torch::nn::Sequential net;
  std::int64_t in = o.input_size;
  for (int width : o.layers) {
    net->push_back(torch::nn::Linear(in, width));
    net->push_back(torch::nn::ReLU());
    in = width;
  }
  net->push_back(torch::nn::Linear(in, o.classes));
  return net;
}

std::int64_t parameter_count(const torch::nn::Sequential& model) {
  std::int64_t n = 0;
  for (const torch::Tensor& p : model->parameters()) n += p.numel();
  return n;
}

// MNIST-shaped samples a model can learn: each class has a mean image (the
// same on every rank, from the base seed) and a sample is its class's mean
// plus unit noise from this rank's own generator, so ranks see different data
// and a run is reproducible from --seed.
class SyntheticData {
 public:
  SyntheticData(const SmokeOptions& o, int rank, torch::Device device, torch::Dtype dtype)
      : rank_gen_(at::make_generator<at::CPUGeneratorImpl>(runtime::rank_seed(o.seed, rank))),
        device_(device),
        dtype_(dtype) {
    auto shared = at::make_generator<at::CPUGeneratorImpl>(o.seed);
    // 0.25 keeps the classes overlapping at first: the loss falls over tens of
    // steps rather than in one, yet clearly within --model debug's 20.
    means_ = torch::randn({o.classes, o.input_size}, shared) * 0.25;
  }

  std::pair<torch::Tensor, torch::Tensor> next(std::int64_t batch) {
    torch::Tensor labels = torch::randint(0, means_.size(0), {batch}, rank_gen_, torch::kLong);
    torch::Tensor noise = torch::randn({batch, means_.size(1)}, rank_gen_);
    torch::Tensor x = means_.index_select(0, labels).add_(noise);
    return {x.to(device_, dtype_), labels.to(device_)};
  }

 private:
  at::Generator rank_gen_;
  torch::Device device_;
  torch::Dtype dtype_;
  torch::Tensor means_;
};

// What rank 0 writes; other ranks have none.
class Outputs {
 public:
  explicit Outputs(const std::string& dir) : dir_(fs::absolute(dir)) {
    std::error_code error;
    fs::create_directories(dir_, error);
    if (error) throw Error(fmt::format("{}: cannot create: {}", dir_.string(), error.message()));
    // A summary left by an earlier run must never be read as this run's.
    fs::remove(dir_ / "summary.json", error);
    metrics_.open(dir_ / "metrics.jsonl", std::ios::trunc);
    if (!metrics_) throw Error(fmt::format("{}/metrics.jsonl: cannot write", dir_.string()));
  }

  void record(const StepRecord& step) { metrics_ << report::step_json(step) << '\n'; }

  void write(const std::string& name, const std::string& text) const {
    std::ofstream file(dir_ / name, std::ios::trunc);
    file << text;
    if (!file) throw Error(fmt::format("{}/{}: cannot write", dir_.string(), name));
  }

  std::string dir() const { return dir_.string(); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
  std::ofstream metrics_;
};

torch::Dtype to_dtype(const std::string& name) {
  return name == "bf16" ? torch::kBFloat16 : torch::kFloat;
}

void wait_for_device(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// One rank's model, optimizer, data and gradient averaging.
class Trainer {
 public:
  Trainer(const SmokeOptions& o, const dist::Dist& d)
      : o_(o),
        d_(d),
        model_(seeded_model(o, d)),
        sync_(d.group, model_->parameters(), comm(o, d)),
        adam_(model_->parameters(), torch::optim::AdamOptions(o.lr)),
        data_(o, d.rank, d.device, to_dtype(o.dtype)) {}

  StepRecord step(int index);
  const dist::GradSync& sync() const { return sync_; }
  std::int64_t parameters() const { return parameter_count(model_); }

 private:
  static dist::CommOptions comm(const SmokeOptions& o, const dist::Dist& d) {
    dist::CommOptions options = dist::comm_options(d.backend, d.device, to_dtype(o.dtype));
    // 0: every gradient in one bucket, reduced once backward has ended.
    options.bucket_bytes = o.bucket_mb > 0 ? static_cast<std::size_t>(o.bucket_mb * (1 << 20))
                                           : std::numeric_limits<std::size_t>::max();
    return options;
  }

  static torch::nn::Sequential seeded_model(const SmokeOptions& o, const dist::Dist& d) {
    torch::manual_seed(runtime::rank_seed(o.seed, d.rank));
    torch::nn::Sequential model = build_model(o);
    model->to(d.device, to_dtype(o.dtype));
    return model;
  }

  // Test-only: one rank's averaged gradients are nudged, so its parameters
  // leave the others' and the final check must catch it.
  void perturb() {
    torch::NoGradGuard no_grad;
    for (torch::Tensor& p : model_->parameters()) p.mutable_grad().add_(1e-3);
  }

  // Test-only: this rank sleeps (in libc, so its stack ends here) until it is killed, as a
  // hung rank would, while the others wait for it in the gradient all-reduce.
  [[gnu::noinline]] static void straggle() {
    for (;;) ::sleep(3600);
  }

  double lap(Clock::time_point& mark) const {
    wait_for_device(d_.device);
    auto now = Clock::now();
    double elapsed = std::chrono::duration<double>(now - mark).count();
    mark = now;
    return elapsed;
  }

  const SmokeOptions& o_;
  const dist::Dist& d_;
  torch::nn::Sequential model_;
  dist::GradSync sync_;
  torch::optim::Adam adam_;  // libtorch's own: the optimizer is not what this test checks
  SyntheticData data_;
};

StepRecord Trainer::step(int index) {
  StepRecord r;
  r.step = index;
  Clock::time_point start = Clock::now(), mark = start;
  auto [x, labels] = data_.next(o_.batch_size);
  r.data_s = lap(mark);
  torch::Tensor logits = model_->forward(x);
  torch::Tensor loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), labels);
  r.forward_s = lap(mark);
  if (index == 1 && d_.rank == o_.hang_rank) straggle();
  sync_.begin_step(loss);
  loss.backward();
  r.backward_s = lap(mark);
  sync_.end_step();
  if (d_.rank == o_.perturb_rank) perturb();
  r.allreduce_s = lap(mark);
  adam_.step();
  r.optimizer_s = lap(mark);
  r.step_s = std::chrono::duration<double>(mark - start).count();
  r.loss = sync_.mean_loss();
  r.samples_per_s = static_cast<double>(o_.batch_size) * d_.world_size / r.step_s;
  return r;
}

// State that outlives a failure, so rank 0 can still write a summary.
struct Run {
  const SmokeOptions& options;
  const Env& env;
  Outputs* outputs;  // rank 0 only
  dist::Dist dist;   // before setup() succeeds, only rank and world size
  std::vector<StepRecord> steps;
  std::vector<report::BandwidthRow> collectives;
  double setup_s = 0;           // dist::setup(): rank, device, rendezvous, process group
  const char* phase = nullptr;  // for failure messages; null while setting up
};

// "step 12: " or "broadcasting rank 0's parameters: ", to prefix a failure.
std::string where(const Run& run) {
  if (!run.phase) return "";
  std::string phase = run.phase;
  if (phase == "step") phase = fmt::format("step {}", run.steps.size() + 1);
  return phase + ": ";
}

std::string describe_buckets(const SmokeOptions& o, std::size_t buckets) {
  if (o.bucket_mb <= 0 || buckets == 1) return "1 gradient bucket, all-reduced after backward";
  return fmt::format("{} gradient bucket{} of at most {:g} MiB, all-reduced during backward",
                     buckets, buckets == 1 ? "" : "s", o.bucket_mb);
}

void log_start(const Run& run, const Trainer& trainer) {
  const dist::Dist& d = run.dist;
  const SmokeOptions& o = run.options;
  dist::log(d, "{} rank{} ({}); device {} ({}); backend {} ({})", d.world_size,
            d.world_size == 1 ? "" : "s", d.rank_info.source, d.device.str(), d.device_source,
            d.backend, d.backend_source);
  double loading = std::chrono::duration<double>(o.main_entered - o.started).count();
  dist::log(d,
            "ready {:.0f} ms after start: libtorch loaded in {:.0f} ms, rendezvous and "
            "process group {:.0f} ms",
            seconds_since(o.started) * 1e3, loading * 1e3, run.setup_s * 1e3);
  std::size_t buckets = trainer.sync().bucket_count();
  std::string sync = d.world_size == 1 ? "gradients stay local" : describe_buckets(o, buckets);
  dist::log(d,
            "model {} ({} parameters, {}), {}, batch {} per rank, {} steps ({} warm-up), {} "
            "thread{} per rank",
            describe_layers(o), trainer.parameters(), sync, o.dtype, o.batch_size, o.iters,
            o.warmup, o.threads, o.threads == 1 ? "" : "s");
}

void log_step(const Run& run, const StepRecord& r) {
  dist::log(run.dist,
            "step {:>4}/{} loss {:.4f} | {:.2f} ms (data {:.2f}, fwd {:.2f}, bwd {:.2f}, "
            "all-reduce {:.2f}, opt {:.2f}) | {:.0f} samples/s",
            r.step, run.options.iters, r.loss, r.step_s * 1e3, r.data_s * 1e3, r.forward_s * 1e3,
            r.backward_s * 1e3, r.allreduce_s * 1e3, r.optimizer_s * 1e3, r.samples_per_s);
}

void train(Run& run, Trainer& trainer) {
  const SmokeOptions& o = run.options;
  run.phase = "step";
  for (int i = 1; i <= o.iters; ++i) {
    StepRecord r = trainer.step(i);
    run.steps.push_back(r);
    if (i == 1) {
      dist::stamp("first_step");
      dist::log(run.dist, "first step done {:.0f} ms after start", seconds_since(o.started) * 1e3);
    }
    if (i % o.log_freq != 0 && i != o.iters) continue;
    log_step(run, r);
    if (run.outputs) run.outputs->record(r);
  }
}

report::Table configuration(const SmokeOptions& o, std::int64_t parameters, int world_size) {
  return {
      {"model", o.model.empty() ? "default (reference MLP)" : o.model},
      {"layers", describe_layers(o)},
      {"parameters", std::to_string(parameters)},
      {"batch size",
       fmt::format("{} per rank, {} global", o.batch_size, o.batch_size * world_size)},
      {"steps", fmt::format("{} ({} warm-up)", o.iters, o.warmup)},
      {"optimizer", fmt::format("Adam, lr {:g}", o.lr)},
      {"dtype", o.dtype},
      {"seed", fmt::format("{} (rank r uses seed x (r + 1))", o.seed)},
      {"logged", o.log_freq == 1 ? "every step" : fmt::format("every {} steps", o.log_freq)},
      {"perturbed rank", o.perturb_rank < 0 ? "none" : std::to_string(o.perturb_rank)},
  };
}

report::Table environment(const dist::Dist& d, const SmokeOptions& o, const Trainer* trainer) {
  report::Table rows = {
      {"hostname", hostname()},
      {"world size", fmt::format("{} ({} per host)", d.world_size, d.local_world_size)},
      {"ranks from", d.rank_info.source},
      {"rendezvous", d.world_size == 1 ? "none (one rank)"
                                       : fmt::format("{}:{}", d.rendezvous.master_addr,
                                                     d.rendezvous.master_port)},
      {"libtorch", dist::libtorch_version()},
      {"threads", std::to_string(torch::get_num_threads())},
      {"device", fmt::format("{} ({})", d.device.str(), d.device_source)},
      {"backend", fmt::format("{} ({})", d.backend, d.backend_source)},
  };
  if (trainer)
    rows.emplace_back("gradient buckets", describe_buckets(o, trainer->sync().bucket_count()));
  return rows;
}

report::Machine machine(const dist::Dist& d) {
  return {.hostname = hostname(),
          .device = d.device.str(),
          .backend = d.backend,
          .libtorch = dist::libtorch_version(),
          .ranks_per_node = d.local_world_size,
          .threads = torch::get_num_threads()};
}

double mean_samples_per_s(const std::vector<StepRecord>& steps, int warmup) {
  std::vector<double> values;
  for (std::size_t i = static_cast<std::size_t>(warmup); i < steps.size(); ++i) {
    values.push_back(steps[i].samples_per_s);
  }
  return report::summarize(values).mean;
}

void fill_summary(report::Summary& s, const Run& run) {
  s.world_size = run.dist.world_size;
  s.machine = machine(run.dist);
  s.collectives = run.collectives;
  s.steps = static_cast<int>(run.steps.size());
  if (!run.steps.empty()) {
    s.first_loss = run.steps.front().loss;
    s.final_loss = run.steps.back().loss;
    s.samples_per_s = mean_samples_per_s(run.steps, std::min(run.options.warmup, s.steps - 1));
  }
  if (run.outputs) {
    s.output_dir = run.outputs->dir();
    s.report = run.outputs->path("report.md");
  }
}

std::string describe_agreement(const dist::GradSync::Agreement& a) {
  if (a.identical) return fmt::format("fingerprint {:016x} on every rank", a.max);
  return fmt::format("fingerprints differ: {:016x} to {:016x}", a.min, a.max);
}

// Rank 0's report.md, summary.json and console summary.
int write_outputs(const Run& run, const report::ReportInputs& in) {
  if (!run.outputs) return in.summary.passed ? 0 : 1;
  run.outputs->write("report.md", report::report_markdown(in));
  run.outputs->write("summary.json", report::summary_json(in.summary));
  std::fputs(report::console_summary(in).c_str(), stdout);
  std::fflush(stdout);
  return in.summary.passed ? 0 : 1;
}

// The sweep, and its headline figures in the log.
void measure(Run& run) {
  const SmokeOptions& o = run.options;
  if (o.no_collectives) return;
  run.phase = "measuring collectives";
  Clock::time_point start = Clock::now();
  run.collectives = measure_collectives(run.dist, o);
  for (report::Collective c : {report::Collective::all_reduce, report::Collective::all_gather}) {
    report::CollectiveHeadline h = report::headline(run.collectives, c);
    dist::log(run.dist, "{}: latency {:.0f} us, peak bus bandwidth {:.3f} GB/s",
              report::collective_name(c), h.latency_us, h.peak_busbw_gbs);
  }
  dist::log(run.dist, "collectives measured in {:.0f} ms", seconds_since(start) * 1e3);
}

int check_and_report(Run& run, const Trainer& trainer) {
  run.phase = "comparing parameters across ranks";
  dist::GradSync::Agreement agreement = trainer.sync().check_identical();
  std::vector<double> losses;
  for (const StepRecord& r : run.steps) losses.push_back(r.loss);
  report::ReportInputs in;
  in.loss = report::check_loss(losses);
  in.summary = report::judge(agreement.identical, in.loss);
  fill_summary(in.summary, run);
  dist::log(run.dist, "{}: {}{}", in.summary.passed ? "PASS" : "FAIL", in.summary.reason,
            agreement.identical ? "" : " (" + describe_agreement(agreement) + ")");
  in.configuration = configuration(run.options, trainer.parameters(), run.dist.world_size);
  in.environment = environment(run.dist, run.options, &trainer);
  in.steps = run.steps;
  in.warmup = run.options.warmup;
  in.fingerprint = describe_agreement(agreement);
  return write_outputs(run, in);
}

// --collectives-only: the sweep is the whole run.
int report_collectives(Run& run) {
  report::ReportInputs in;
  in.summary = report::judge_collectives_only();
  fill_summary(in.summary, run);
  dist::log(run.dist, "PASS: {}", in.summary.reason);
  in.configuration = {{"collectives", "all_reduce, all_gather (training skipped)"}};
  in.environment = environment(run.dist, run.options, nullptr);
  return write_outputs(run, in);
}

// Rank 0 leaves a failing summary.json behind whenever it can, so `ezpz test`
// reports why rather than only an exit status.
void write_failure(const Run& run, const std::string& reason) {
  if (!run.outputs) return;
  report::Summary s;
  s.reason = reason;
  fill_summary(s, run);
  try {
    run.outputs->write("summary.json", report::summary_json(s));
  } catch (const Error&) {
    // The original failure is the one worth reporting.
  }
}

void check_perturb_rank(const SmokeOptions& o, const dist::Dist& d) {
  if (o.perturb_rank >= d.world_size) {
    throw Error(fmt::format("--perturb-rank {}: there {} only {} rank{}", o.perturb_rank,
                            d.world_size == 1 ? "is" : "are", d.world_size,
                            d.world_size == 1 ? "" : "s"));
  }
}

int train_and_check(Run& run) {
  Clock::time_point start = Clock::now();
  run.dist = dist::setup(run.env);
  dist::stamp("process_group");
  run.setup_s = seconds_since(start);
  check_perturb_rank(run.options, run.dist);
  if (run.options.collectives_only) {
    measure(run);
    return report_collectives(run);
  }
  run.phase = "broadcasting rank 0's parameters";
  Trainer trainer(run.options, run.dist);
  log_start(run, trainer);
  train(run, trainer);
  measure(run);
  return check_and_report(run, trainer);
}

}  // namespace

void run_probe() {
  runtime::Availability a = dist::probe();
  runtime::DeviceChoice device = runtime::choose_device({}, a, 0);
  nlohmann::ordered_json j = {
      {"libtorch", dist::libtorch_version()},
      {"devices",
       {{"cpu", 1},
        {"cuda", a.cuda_devices},
        {"xpu", a.xpu_devices},
        {"mps", a.mps_available ? 1 : 0}}},
      {"backends", runtime::available_backends(a)},
      {"default_device", device.type},
      {"default_backend", runtime::choose_backend(std::nullopt, device, a).name},
      {"threads", torch::get_num_threads()},
      {"cores", std::thread::hardware_concurrency()},
  };
  std::puts(json_text(j).c_str());
  // ezpz doctor waits on this process. Leaving through exit() would run
  // libtorch's static destructors (its operator registries): about 100 ms
  // of a ~700 ms probe on a 2-core VM (an empty program linked to
  // libtorch_cpu, 20 alternated runs: 741 ms median with return, 640 ms
  // with _exit). Nothing is left to flush but stdout.
  std::fflush(stdout);
  std::_Exit(0);
}

int run_smoke(const SmokeOptions& options) {
  set_threads(options.threads);
  Env env = dist::process_environment();
  // Bad rank variables fail here, before any file is written.
  runtime::RankInfo who = runtime::rank_info_from_env(env);
  std::optional<Outputs> outputs;
  if (who.rank == 0) outputs.emplace(options.output_dir);
  Run run{options, env, outputs ? &*outputs : nullptr, {}, {}, {}};
  run.dist.rank = who.rank;
  run.dist.world_size = who.world_size;
  try {
    return train_and_check(run);
  } catch (const std::exception& error) {
    std::string reason = where(run) + without_backtrace(error);
    write_failure(run, reason);
    if (who.world_size > 1) reason = fmt::format("rank {}: {}", who.rank, reason);
    const auto* ours = dynamic_cast<const Error*>(&error);
    throw Error(reason, ours ? ours->code() : ExitCode::failure);
  }
}

}  // namespace ezpz::smoke
