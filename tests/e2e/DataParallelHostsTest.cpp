//===- DataParallelHostsTest.cpp - two ranks on two hosts, over TCP -------===//
//
// mpirun's multi-host path, not only shared memory: two network namespaces
// made here (each its own network stack and host name, joined by a veth
// pair on a private test range), mpirun started in the first, the second
// reached through an ssh stand-in that enters its namespace, the ranks
// talking over TCP alone (btl tcp,self). The run must end as the same run
// on one host does, to the byte: the gradient exchange sums in rank order
// whatever carries it. Skipped where namespaces cannot be made (not root,
// no CAP_NET_ADMIN, no `ip` or `unshare`) or mpirun is missing.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tensor.h"
#include "tests/e2e/Command.h"
#include "tests/e2e/ReverseData.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::e2e;
using tfc::rt::DType;
using tfc::rt::Tensor;

namespace {

const std::string kTfc = TFC_BINARY;
const std::string kSource = TFC_SOURCE_DIR;
// A private range for the test's two hosts (RFC 1918), unlikely to be in use.
const std::string kHostA = "10.213.0.1", kHostB = "10.213.0.2";

class DataParallelHostsTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (run("command -v mpirun && command -v ip && command -v unshare").status != 0)
      GTEST_SKIP() << "mpirun, ip or unshare missing: the two-host path is untested";
    suffix = std::to_string(getpid());
    nsA = "tfcA" + suffix;
    nsB = "tfcB" + suffix;
    CommandResult made = run("ip netns add " + nsA + " && ip netns add " + nsB);
    if (made.status != 0) {
      run("ip netns del " + nsA + "; ip netns del " + nsB);
      GTEST_SKIP() << "cannot make network namespaces here (" << made.output
                   << "): the two-host path is untested";
    }
    made_ = true;
    std::string vethA = "tfcva" + suffix, vethB = "tfcvb" + suffix;
    CommandResult link = run(
        "ip link add " + vethA + " type veth peer name " + vethB + " && ip link set " + vethA +
        " netns " + nsA + " && ip link set " + vethB + " netns " + nsB + " && ip -n " + nsA +
        " addr add " + kHostA + "/24 dev " + vethA + " && ip -n " + nsB + " addr add " + kHostB +
        "/24 dev " + vethB + " && ip -n " + nsA + " link set " + vethA + " up && ip -n " + nsB +
        " link set " + vethB + " up && ip -n " + nsA + " link set lo up && ip -n " + nsB +
        " link set lo up");
    ASSERT_EQ(link.status, 0) << link.output;
    dir = makeTempDir("dataparallel-hosts");
    ASSERT_FALSE(dir.empty());
  }
  void TearDown() override {
    if (made_)
      run("ip netns del " + nsA + "; ip netns del " + nsB); // the veth pair goes with them
  }
  std::string suffix, nsA, nsB, dir;
  bool made_ = false;
};

TEST_F(DataParallelHostsTest, TwoHostsOverTcpMatchOneHostToTheByte) {
  // The ssh stand-in mpirun calls for the other host: enters its namespace
  // and a host name of its own.
  std::string agent = dir + "/netns-agent.sh";
  {
    std::ofstream out(agent);
    out << "#!/bin/sh\nhost=\"$1\"; shift\ncase \"$host\" in\n"
        << "  " << kHostA << ") ns=" << nsA << "; name=tfc-a ;;\n"
        << "  " << kHostB << ") ns=" << nsB << "; name=tfc-b ;;\n"
        << "  *) echo \"netns-agent: unknown host $host\" >&2; exit 255 ;;\nesac\n"
        << "exec ip netns exec \"$ns\" unshare --uts sh -c \"hostname $name; $*\"\n";
  }
  ASSERT_EQ(chmod(agent.c_str(), 0755), 0);
  std::string binary = dir + "/reverse8";
  CommandResult compiled =
      run(kTfc + " compile " + kSource + "/models/reverse.tf --batch 8 -o " + binary);
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  // The reverse task, 6 steps of a global batch of 16.
  writeReverseData(dir + "/data", {{"train", 96}, {"val", 16}, {"test", 16}}, /*seed=*/5);
  const std::string train = binary + " train --epochs 1 --threads 1 --data " + dir + "/data";
  CommandResult hosts = run(
      "timeout 120 ip netns exec " + nsA + " unshare --uts sh -c \"hostname tfc-a; mpirun "
      "--allow-run-as-root -np 2 -H " + kHostA + ":1," + kHostB + ":1 --mca plm_rsh_agent " +
      agent + " --mca btl tcp,self --mca btl_tcp_if_include 10.213.0.0/24 --mca "
      "oob_tcp_if_include 10.213.0.0/24 sh -c 'echo rank \\$OMPI_COMM_WORLD_RANK on "
      "\\$(hostname) >&2; exec " + train + " --run-dir " + dir + "/hosts'\"");
  ASSERT_EQ(hosts.status, 0) << hosts.output;
  // Two hosts: each rank on its own.
  EXPECT_NE(hosts.output.find("rank 0 on tfc-a"), std::string::npos) << hosts.output;
  EXPECT_NE(hosts.output.find("rank 1 on tfc-b"), std::string::npos) << hosts.output;
  CommandResult local = run("mpirun --allow-run-as-root --oversubscribe -np 2 " + train +
                            " --run-dir " + dir + "/local");
  ASSERT_EQ(local.status, 0) << local.output;
  std::string a = fileBytes(dir + "/hosts/last.safetensors");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, fileBytes(dir + "/local/last.safetensors"));
  EXPECT_EQ(fileBytes(dir + "/hosts/metrics.jsonl"), fileBytes(dir + "/local/metrics.jsonl"));
}

} // namespace
