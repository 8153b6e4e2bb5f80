#include "ringside/common/json_limits.h"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace ringside {

namespace {

// A SAX handler that only counts levels: returning false from start_object/start_array stops
// the parser there (nlohmann::json::sax_parse).
class DepthCounter {
 public:
  explicit DepthCounter(int maxDepth) : maxDepth_(maxDepth) {}
  bool tooDeep() const { return tooDeep_; }

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(nlohmann::json::number_integer_t) { return true; }
  bool number_unsigned(nlohmann::json::number_unsigned_t) { return true; }
  bool number_float(nlohmann::json::number_float_t, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return enter(); }
  bool key(std::string&) { return true; }
  bool end_object() { return leave(); }
  bool start_array(std::size_t) { return enter(); }
  bool end_array() { return leave(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception&) {
    return false;  // not JSON: the caller's parser says why
  }

 private:
  bool enter() {
    if (++depth_ > maxDepth_) tooDeep_ = true;
    return !tooDeep_;
  }
  bool leave() {
    --depth_;
    return true;
  }

  int maxDepth_;
  int depth_ = 0;
  bool tooDeep_ = false;
};

}  // namespace

Status checkJsonDepth(std::string_view text, int maxDepth, std::string_view source) {
  DepthCounter counter(maxDepth);
  // strict = false: stop after the first value; trailing text is the caller's parser's business.
  (void)nlohmann::json::sax_parse(text, &counter, nlohmann::json::input_format_t::json,
                                  /*strict=*/false);
  if (!counter.tooDeep()) return Status::ok();
  return Status::invalidArgument(std::string(source) + " nests objects and arrays more than " +
                                 std::to_string(maxDepth) +
                                 " levels deep: flatten it (the limit is in docs/protocol.md)");
}

}  // namespace ringside
