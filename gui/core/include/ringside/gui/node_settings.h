// Per-node launch settings the GUI keeps with a node (NodeRecord) and puts into the run spec of a
// multi-node run (toRunSpec): the network for MPI/NCCL traffic, extra mpirun options, and the
// client key a node is reached with when it is not the GUI's own (a local cluster's). The checks
// here are the light ones the GUI can make before the owner's agent checks them again
// (agent/src/launch_command.cpp). Pure functions of Qt Core, thread-safe.
#pragma once

#include <QString>
#include <QStringList>

namespace ringside::gui {

struct NodeSettings {
  // The interface (e.g. "eth1") or IPv4 subnet ("10.0.0.0/24") that MPI and NCCL traffic of this
  // node uses, as HostSlots.network_interface; empty: the owner agent's --network-interface, else
  // the libraries' own choice.
  QString networkInterface;
  // Extra mpirun options as one command line (QProcess::splitCommand's quoting); used when this
  // node owns a run (RunSpec.mpirun_args). Empty: none.
  QString mpirunOptions;
  // A file holding the Z85 CURVE secret key this GUI presents to the node instead of its own
  // keypair (loadClientKeyFile); empty: the GUI's keypair. Set by --local-cluster.
  QString clientKeyFile;
};

// "" when `value` is empty, an interface name (1 to 15 characters of A-Z a-z 0-9 _ . : -, not
// starting with '-', as Linux allows) or an IPv4 subnet a.b.c.d/n (n from 0 to 32); otherwise a
// translated message that says what to enter.
QString networkInterfaceError(const QString& value);

// "" when `options` is empty or its first word (splitMpirunOptions) starts with '-' (the agent
// takes options only, each value after its option); otherwise a translated message.
QString mpirunOptionsError(const QString& options);

// The options as words: QProcess::splitCommand ("--mca plm_rsh_args \"-p 2222\"" ->
// {"--mca", "plm_rsh_args", "-p 2222"}).
QStringList splitMpirunOptions(const QString& options);

}  // namespace ringside::gui
