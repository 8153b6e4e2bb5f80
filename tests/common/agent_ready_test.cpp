// Tests of the agent's ready file (common/include/ringside/common/agent_ready.h): the readiness
// contract between ringside-agent --ready-file and the programs that start an agent.
#include "ringside/common/agent_ready.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ringside {
namespace {

namespace fs = std::filesystem;

class AgentReadyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringside_agent_ready_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "ready.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

TEST_F(AgentReadyTest, WrittenFileReadsBackWithEveryField) {
  v1::AgentReady ready;
  ready.set_control_endpoint("tcp://127.0.0.1:47600");
  ready.set_events_endpoint("tcp://127.0.0.1:47601");
  ready.set_public_key(std::string(40, 'k'));
  ready.set_node_id("0123456789abcdef");
  ready.set_agent_version("0.1.0");
  ready.set_protocol_version(1);
  ready.set_pid(4242);
  ASSERT_TRUE(writeAgentReady(path_, ready).isOk());
  Result<v1::AgentReady> read = readAgentReady(path_);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(read->SerializeAsString(), ready.SerializeAsString());
  // The documented form: the schema's field names as JSON keys.
  std::ifstream in(path_);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"control_endpoint\":\"tcp://127.0.0.1:47600\""), std::string::npos)
      << text;
}

TEST_F(AgentReadyTest, MissingFileIsNotFoundAndGarbageIsCorruption) {
  EXPECT_EQ(readAgentReady(path_).status().code(), Status::Code::kNotFound);
  std::ofstream(path_) << "serving control on tcp://127.0.0.1:1";
  EXPECT_EQ(readAgentReady(path_).status().code(), Status::Code::kCorruption);
  std::ofstream(path_) << R"({"control_endpoint": "tcp://a:1", "surprise": 1})";
  EXPECT_EQ(readAgentReady(path_).status().code(), Status::Code::kCorruption);
  std::ofstream(path_) << R"({"public_key": "x"})";
  EXPECT_EQ(readAgentReady(path_).status().code(), Status::Code::kCorruption)
      << "a ready file without endpoints is not one";
}

}  // namespace
}  // namespace ringside
