// The sweeps' files (sweep_store.h).
#include "ringside/agent/sweep/sweep_store.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "ringside/agent/run_ids.h"
#include "ringside/common/file_io.h"

namespace ringside::agent {
namespace {

namespace fs = std::filesystem;

bool isSweepId(const std::string& id) {
  return !id.empty() && id.size() <= 64 &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
         });
}

}  // namespace

std::string SweepStore::newSweepId() { return newTimestampedId('s'); }

std::string SweepStore::path(const std::string& sweepId) const {
  return (fs::path(dir_) / (sweepId + ".json")).string();
}

Status SweepStore::write(const v1::SweepInfo& sweep) const {
  std::string text;
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(sweep, &text, print).ok()) {
    return Status::internal("sweep " + sweep.sweep_id() + " cannot be written as JSON");
  }
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::ioError("cannot create the sweeps folder " + dir_ + ": " + ec.message());
  return writeFileAtomic(path(sweep.sweep_id()), text + "\n", 0600);
}

Result<std::vector<v1::SweepInfo>> SweepStore::readAll(
    const std::function<void(const std::string&)>& report) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::ioError("cannot create the sweeps folder " + dir_ + ": " + ec.message());
  std::vector<v1::SweepInfo> found;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().extension() != ".json") continue;
    auto text = readSmallFile(entry.path().string(), kMaxSweepFileBytes, nullptr);
    v1::SweepInfo info;
    google::protobuf::util::JsonParseOptions parse;
    parse.ignore_unknown_fields = true;  // a newer agent's fields
    if (!text.isOk() || !google::protobuf::util::JsonStringToMessage(*text, &info, parse).ok() ||
        !isSweepId(info.sweep_id()) || entry.path().stem() != info.sweep_id()) {
      report("sweep file " + entry.path().string() +
             " cannot be read as a sweep; it is left in place and the sweep is not taken back "
             "(move it away to silence this)");
      continue;
    }
    found.push_back(std::move(info));
  }
  if (ec) return Status::ioError("cannot list " + dir_ + ": " + ec.message());
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.created_time() < b.created_time();
  });
  return found;
}

}  // namespace ringside::agent
