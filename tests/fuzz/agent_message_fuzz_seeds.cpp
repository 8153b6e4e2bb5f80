// Writes the seed corpus of agent_message_fuzzer: one encoded Envelope per file, each a reply or
// an event as an agent sends it to the GUI, with fields at and over the protocol's limits
// (docs/protocol.md#limits) for the fuzzer to mutate.
// Usage: agent_message_fuzz_seeds DIR
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "ringside/common/protocol.h"

namespace {

using namespace ringside;

bool writeSeed(const std::filesystem::path& dir, const std::string& name,
               const v1::Envelope& envelope) {
  std::ofstream out(dir / (name + ".bin"), std::ios::binary | std::ios::trunc);
  out << protocol::encodeEnvelope(envelope);
  return static_cast<bool>(out);
}

v1::RunInfo run(const std::string& runId) {
  v1::RunInfo info;
  info.set_run_id(runId);
  info.mutable_spec()->set_name("seed-run");
  info.mutable_spec()->add_tags("seed");
  info.mutable_spec()->mutable_trainer()->mutable_config()->set_backend("nccl");
  info.mutable_spec()->set_ranks_per_node(2);
  info.set_state(v1::FAILED);
  info.set_reason("rank 1 killed by signal 9");
  info.set_world_size(2);
  v1::HostSlots* host = info.add_placement();
  host->set_host("gpu01");
  host->set_ranks(2);
  host->add_gpus(0);
  host->add_gpus(1);
  info.mutable_stall()->set_summary("rank 1 on gpu01 has not reported for 14 s");
  info.mutable_stall()->add_stuck_nodes("gpu01");
  v1::RankStallState* rank = info.mutable_stall()->add_ranks();
  rank->set_rank(1);
  rank->set_detail("process stopped");
  (*info.mutable_params())["lr"] = "0.1";
  return info;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: agent_message_fuzz_seeds DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  bool ok = true;

  v1::Envelope hello = protocol::newEnvelope(1);
  v1::NodeInfo* node = hello.mutable_hello_reply()->mutable_node();
  node->set_hostname("gpu01");
  node->set_cpu_model("AMD EPYC 9654");
  node->set_gpu_slots_total(100);
  for (uint32_t i = 0; i < 70; ++i) {
    v1::GpuInfo* gpu = node->add_gpus();
    gpu->set_index(i);
    gpu->set_name("NVIDIA H100 80GB HBM3");
  }
  node->add_labels("rack-3");
  ok &= writeSeed(dir, "hello_reply", hello);

  v1::Envelope list = protocol::newEnvelope(2);
  for (int i = 0; i < 3; ++i)
    *list.mutable_list_runs_reply()->add_runs() = run("r" + std::to_string(i));
  list.mutable_list_runs_reply()->add_runs()->set_run_id(std::string(200, 'r'));
  list.mutable_list_runs_reply()->set_next_page_token("3");
  ok &= writeSeed(dir, "list_runs_reply", list);

  v1::Envelope launch = protocol::newEnvelope(3);
  *launch.mutable_launch_run_reply()->mutable_run() = run("r-launched");
  ok &= writeSeed(dir, "launch_run_reply", launch);

  v1::Envelope preflight = protocol::newEnvelope(4);
  preflight.mutable_preflight_reply()->set_hostname("gpu02");
  preflight.mutable_preflight_reply()->add_free_gpus(0);
  preflight.mutable_preflight_reply()->add_free_gpus(99);
  preflight.mutable_preflight_reply()->add_problems("dataset directory missing");
  ok &= writeSeed(dir, "preflight_reply", preflight);

  v1::Envelope page = protocol::newEnvelope(5);
  v1::FetchRunDataReply* reply = page.mutable_fetch_run_data_reply();
  reply->set_run_id("r1");
  v1::MetricSample* sample = reply->add_samples();
  sample->set_seq(1);
  sample->set_name("train/loss");
  sample->set_rank(-1);
  reply->add_samples()->set_rank(70000);
  reply->add_log_lines()->set_text("epoch 1");
  *reply->add_states()->mutable_run() = run("r1");
  *reply->mutable_run() = run("r1");
  reply->set_last_seq(4);
  ok &= writeSeed(dir, "fetch_run_data_reply", page);

  v1::Envelope telemetryPage = protocol::newEnvelope(7);
  v1::FetchTelemetryReply* readings = telemetryPage.mutable_fetch_telemetry_reply();
  readings->set_node_id("node-a");
  v1::NodeTelemetry* reading = readings->add_entries();
  reading->set_seq(1);
  reading->set_wall_time(1.7e9);
  reading->add_gpus()->set_index(0);
  reading->add_gpus()->set_index(99);
  reading->add_gpus_in_use(0);
  readings->set_last_seq(1);
  ok &= writeSeed(dir, "fetch_telemetry_reply", telemetryPage);

  v1::Envelope tail = protocol::newEnvelope(6);
  tail.mutable_tail_log_reply()->set_run_id("r1");
  tail.mutable_tail_log_reply()->add_lines()->set_text("last line");
  ok &= writeSeed(dir, "tail_log_reply", tail);

  ok &= writeSeed(dir, "error",
                  protocol::makeErrorReply(7, v1::ErrorReply::NOT_FOUND, std::string(5000, 'e')));

  v1::Envelope telemetry = protocol::newEnvelope(0);
  for (uint32_t i = 0; i < 80; ++i) {
    v1::GpuTelemetry* gpu = telemetry.mutable_node_telemetry()->add_gpus();
    gpu->set_index(i);
    gpu->set_util_pct(50);
  }
  telemetry.mutable_node_telemetry()->add_gpus_in_use(3);
  ok &= writeSeed(dir, "node_telemetry", telemetry);

  v1::Envelope state = protocol::newEnvelope(0);
  state.mutable_run_state()->set_seq(9);
  *state.mutable_run_state()->mutable_run() = run("r1");
  state.mutable_run_state()->mutable_run()->set_reason(std::string(5000, 'x'));
  ok &= writeSeed(dir, "run_state", state);

  v1::Envelope metrics = protocol::newEnvelope(0);
  metrics.mutable_metric_batch()->set_run_id("r1");
  *metrics.mutable_metric_batch()->add_samples() = *sample;
  ok &= writeSeed(dir, "metric_batch", metrics);

  v1::Envelope logs = protocol::newEnvelope(0);
  logs.mutable_log_batch()->set_run_id("r1");
  logs.mutable_log_batch()->add_lines()->set_text("[rank 0] step 1");
  ok &= writeSeed(dir, "log_batch", logs);

  if (!ok) {
    std::cerr << "agent_message_fuzz_seeds: cannot write seeds to " << dir << "\n";
    return 1;
  }
  return 0;
}
