// Writes the seed corpus of protocol_fuzzer: one encoded Envelope per file, covering requests,
// replies, events, rank metrics and the refused kinds (no body, newer version).
// Usage: protocol_fuzz_seeds DIR
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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: protocol_fuzz_seeds DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  bool ok = true;

  v1::Envelope hello = protocol::newEnvelope(1);
  hello.mutable_hello()->set_client_name("seed");
  ok &= writeSeed(dir, "hello", hello);

  v1::Envelope launch = protocol::newEnvelope(2);
  v1::RunSpec* spec = launch.mutable_launch_run()->mutable_spec();
  spec->set_name("seed-run");
  spec->add_tags("seed");
  spec->mutable_trainer()->mutable_config()->set_backend("mpi");
  spec->mutable_trainer()->mutable_config()->set_epochs(1);
  spec->set_ranks_per_node(2);
  (*spec->mutable_env())["OMP_NUM_THREADS"] = "1";
  spec->add_hosts()->set_host("node-1");
  ok &= writeSeed(dir, "launch_run", launch);

  v1::Envelope fetch = protocol::newEnvelope(3);
  fetch.mutable_fetch_run_data()->set_run_id("run-1");
  fetch.mutable_fetch_run_data()->set_after_seq(41);
  ok &= writeSeed(dir, "fetch_run_data", fetch);

  v1::Envelope page = protocol::newEnvelope(3);
  v1::FetchRunDataReply* reply = page.mutable_fetch_run_data_reply();
  reply->set_run_id("run-1");
  v1::MetricSample* sample = reply->add_samples();
  sample->set_seq(42);
  sample->set_name("train/loss");
  sample->set_value(0.5);
  reply->add_log_lines()->set_text("epoch 1");
  reply->add_states()->mutable_run()->set_state(v1::RUNNING);
  reply->set_last_seq(44);
  reply->set_more(true);
  ok &= writeSeed(dir, "fetch_run_data_reply", page);

  v1::Envelope telemetry = protocol::newEnvelope(0);
  telemetry.mutable_node_telemetry()->set_cpu_pct(12.5);
  telemetry.mutable_node_telemetry()->add_gpus()->set_temp_c(61);
  ok &= writeSeed(dir, "node_telemetry", telemetry);

  v1::Envelope rank = protocol::newEnvelope(0);
  rank.mutable_rank_metrics()->set_run_id("run-1");
  rank.mutable_rank_metrics()->set_batch_seq(7);
  rank.mutable_rank_metrics()->add_points()->set_name("time/step_ms");
  ok &= writeSeed(dir, "rank_metrics", rank);

  ok &=
      writeSeed(dir, "error", protocol::makeErrorReply(4, v1::ErrorReply::NOT_FOUND, "no run 'x'"));
  ok &= writeSeed(dir, "no_body", protocol::newEnvelope(5));
  v1::Envelope newer = protocol::newEnvelope(6);
  newer.set_protocol_version(protocol::kProtocolVersion + 1);
  newer.mutable_list_runs()->set_include_ended(true);
  ok &= writeSeed(dir, "newer_version", newer);

  if (!ok) {
    std::cerr << "protocol_fuzz_seeds: cannot write seeds to " << dir << "\n";
    return 1;
  }
  return 0;
}
