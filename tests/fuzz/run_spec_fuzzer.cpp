// libFuzzer target for the run-spec JSON parser (ringside::trainerConfigFromJson, the one reader
// of --config files, the agent's TrainerJob.config_json and the GUI's presets). Any text must give
// a TrainerConfig or an InvalidArgument naming the source, never a crash, a leak, undefined
// behaviour or unbounded time and memory; a parsed spec must be checkable (validateTrainerConfig)
// and must read back the same after trainerConfigToJson (the agent writes it to spec.json and the
// trainer echoes it in its start record). "The same" compares numbers with ==, NaN equal to NaN:
// protobuf's JSON mapping writes -0.0 as -0 and reads that back as 0, which no key tells apart.
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ringside/common/run_spec.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = trainerConfigFromJson(text, "fuzz");
  if (!parsed.isOk()) {
    if (parsed.status().code() != Status::Code::kInvalidArgument) std::abort();
    if (parsed.status().message().find("fuzz") == std::string::npos) std::abort();
    return 0;
  }
  (void)validateTrainerConfig(*parsed);
  (void)withTrainerDefaults(*parsed);
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_float_comparison(google::protobuf::util::DefaultFieldComparator::EXACT);
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  for (bool multiline : {false, true}) {
    const std::string written = trainerConfigToJson(*parsed, multiline);
    auto again = trainerConfigFromJson(written, "written");
    if (!again.isOk() || !differencer.Compare(*parsed, *again)) std::abort();
  }
  return 0;
}
