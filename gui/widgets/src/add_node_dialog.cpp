#include "ringside/gui/widgets/add_node_dialog.h"

#include <QClipboard>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ringside/common/curve.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/node_settings.h"

namespace ringside::gui {

namespace {

QLabel* errorLabel() {
  auto* label = new QLabel;
  label->setWordWrap(true);
  label->setStyleSheet(QStringLiteral("color: #c0392b;"));
  label->setVisible(false);
  return label;
}

void showError(QLabel* label, const QString& message) {
  label->setText(message);
  label->setVisible(!message.isEmpty());
}

}  // namespace

AddNodeDialog::AddNodeDialog(Controller& controller, const QString& nodeId, QWidget* parent)
    : QDialog(parent), controller_(controller), nodeId_(nodeId) {
  setWindowTitle(isEdit() ? tr("Edit node") : tr("Add node"));
  auto* column = new QVBoxLayout(this);

  auto* nodeBox = new QGroupBox(tr("Node"));
  auto* form = new QFormLayout(nodeBox);
  name_ = new QLineEdit;
  name_->setPlaceholderText(tr("e.g. gpu01 (optional; the host when empty)"));
  form->addRow(tr("&Name:"), name_);
  host_ = new QLineEdit;
  host_->setPlaceholderText(tr("host name or address, e.g. gpu01 or 10.0.0.5"));
  form->addRow(tr("&Host:"), host_);
  hostError_ = errorLabel();
  form->addRow(QString(), hostError_);
  controlPort_ = new QSpinBox;
  controlPort_->setRange(1, 65535);
  controlPort_->setValue(protocol::kDefaultControlPort);
  form->addRow(tr("&Control port:"), controlPort_);
  eventsPort_ = new QSpinBox;
  eventsPort_->setRange(1, 65535);
  eventsPort_->setValue(protocol::kDefaultEventsPort);
  form->addRow(tr("&Events port:"), eventsPort_);
  agentKey_ = new QLineEdit;
  agentKey_->setPlaceholderText(
      tr("40 characters; on the node run: ringside-agent print-public-key"));
  agentKey_->setMaxLength(200);  // long enough that a pasted mistake shows in the message
  QFont mono = agentKey_->font();
  mono.setFamily(QStringLiteral("monospace"));
  mono.setStyleHint(QFont::Monospace);
  agentKey_->setFont(mono);
  form->addRow(tr("Agent public &key:"), agentKey_);
  keyError_ = errorLabel();
  form->addRow(QString(), keyError_);
  column->addWidget(nodeBox);

  auto* launchBox = new QGroupBox(tr("Launch settings"));
  auto* launchForm = new QFormLayout(launchBox);
  networkInterface_ = new QLineEdit;
  networkInterface_->setPlaceholderText(tr("e.g. eth1 or 10.0.0.0/24 (optional)"));
  networkInterface_->setToolTip(
      tr("The network interface or IPv4 subnet that MPI and NCCL use for this node's traffic "
         "with the other nodes of a run. Empty: the libraries pick one (or the agent's "
         "--network-interface). On a cluster, name the interface of the cluster network, e.g. "
         "ib0 or eth1, so that traffic does not go over a slower management network."));
  launchForm->addRow(tr("Network &interface:"), networkInterface_);
  interfaceError_ = errorLabel();
  launchForm->addRow(QString(), interfaceError_);
  mpirunOptions_ = new QLineEdit;
  mpirunOptions_->setPlaceholderText(tr("e.g. --mca btl_tcp_links 2 (optional)"));
  mpirunOptions_->setToolTip(
      tr("Extra mpirun options for runs this node owns (its agent starts mpirun), quoted like a "
         "shell command line, e.g. --mca plm_rsh_args \"-p 2222\". They must start with an "
         "option. Empty: none."));
  launchForm->addRow(tr("mpirun &options:"), mpirunOptions_);
  optionsError_ = errorLabel();
  launchForm->addRow(QString(), optionsError_);
  column->addWidget(launchBox);

  auto* keyBox = new QGroupBox(tr("Authorize this GUI on the node"));
  auto* keyColumn = new QVBoxLayout(keyBox);
  auto* explanation = new QLabel(
      tr("The agent serves only clients whose public key is in its allowlist. This GUI's public "
         "key:"));
  explanation->setWordWrap(true);
  keyColumn->addWidget(explanation);
  const QString guiKey = controller_.guiPublicKey();
  auto* keyRow = new QHBoxLayout;
  guiKey_ = new QLineEdit(guiKey);
  guiKey_->setReadOnly(true);
  guiKey_->setFont(mono);
  guiKey_->setMinimumWidth(QFontMetrics(mono).horizontalAdvance(guiKey) + 16);
  keyRow->addWidget(guiKey_, 1);
  auto* copyKey = new QPushButton(tr("&Copy"));
  copyKey->setToolTip(tr("Copy this GUI's public key to the clipboard"));
  connect(copyKey, &QPushButton::clicked, this,
          [guiKey] { QGuiApplication::clipboard()->setText(guiKey); });
  keyRow->addWidget(copyKey);
  keyColumn->addLayout(keyRow);
  keyColumn->addWidget(new QLabel(tr("On the node run:")));
  auto* commandRow = new QHBoxLayout;
  const QString command = authorizeCommand(guiKey);
  auto* commandText = new QLabel(QStringLiteral("<code>%1</code>").arg(command.toHtmlEscaped()));
  commandText->setTextInteractionFlags(Qt::TextSelectableByMouse);
  commandRow->addWidget(commandText, 1);
  auto* copyCommand = new QPushButton(tr("Copy co&mmand"));
  connect(copyCommand, &QPushButton::clicked, this,
          [command] { QGuiApplication::clipboard()->setText(command); });
  commandRow->addWidget(copyCommand);
  keyColumn->addLayout(commandRow);
  column->addWidget(keyBox);
  clientKeyNote_ = new QLabel;
  clientKeyNote_->setWordWrap(true);
  clientKeyNote_->setVisible(false);
  column->addWidget(clientKeyNote_);

  submitError_ = errorLabel();
  column->addWidget(submitError_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  ok_ = buttons->button(QDialogButtonBox::Ok);
  ok_->setText(isEdit() ? tr("&Save") : tr("&Add"));
  connect(buttons, &QDialogButtonBox::accepted, this, &AddNodeDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &AddNodeDialog::reject);
  column->addWidget(buttons);

  if (isEdit()) {
    if (const std::optional<NodeView> node = controller_.node(nodeId_)) {
      name_->setText(node->record.name);
      const NodeAddress address = parseNodeAddress(node->record.address);
      if (address.valid) {
        host_->setText(address.host);
        controlPort_->setValue(address.controlPort);
        eventsPort_->setValue(address.eventsPort);
      }
      agentKey_->setText(node->record.publicKey);
      networkInterface_->setText(node->record.networkInterface);
      mpirunOptions_->setText(node->record.mpirunOptions);
      clientKeyFile_ = node->record.clientKeyFile;
    }
  }
  if (!clientKeyFile_.isEmpty()) {
    // This node does not allow the GUI's key: it is reached with a local cluster's client key.
    keyBox->setVisible(false);
    clientKeyNote_->setText(tr("This node is reached with the client key in %1 (a local "
                               "cluster's, from --local-cluster), not with this GUI's key.")
                                .arg(clientKeyFile_));
    clientKeyNote_->setVisible(true);
  }

  connect(name_, &QLineEdit::textChanged, this, &AddNodeDialog::revalidate);
  connect(host_, &QLineEdit::textChanged, this, &AddNodeDialog::revalidate);
  connect(agentKey_, &QLineEdit::textChanged, this, &AddNodeDialog::revalidate);
  connect(networkInterface_, &QLineEdit::textChanged, this, &AddNodeDialog::revalidate);
  connect(mpirunOptions_, &QLineEdit::textChanged, this, &AddNodeDialog::revalidate);
  revalidate();
}

// The labels hold text only while their message is shown (showError).
QString AddNodeDialog::keyError() const { return keyError_->text(); }

QString AddNodeDialog::submitError() const { return submitError_->text(); }

QString AddNodeDialog::interfaceError() const { return interfaceError_->text(); }

QString AddNodeDialog::mpirunOptionsError() const { return optionsError_->text(); }

void AddNodeDialog::revalidate() {
  showError(submitError_, {});
  const QString host = host_->text().trimmed();
  // A message only once something was typed: an empty form is not yet wrong.
  showError(hostError_, host.contains(QLatin1Char(' '))
                            ? tr("A host name has no spaces; enter e.g. gpu01 or 10.0.0.5.")
                            : QString());
  const QString key = agentKey_->text().trimmed();
  QString keyMessage;
  if (!key.isEmpty()) {
    const Status valid = curve::validateKey(key.toStdString());
    if (!valid.isOk()) {
      keyMessage = tr("Not a valid agent key (%1). Paste the 40 characters that "
                      "\"ringside-agent print-public-key\" prints on the node.")
                       .arg(QString::fromStdString(valid.message()));
    }
  }
  showError(keyError_, keyMessage);
  showError(interfaceError_, networkInterfaceError(networkInterface_->text().trimmed()));
  showError(optionsError_, ringside::gui::mpirunOptionsError(mpirunOptions_->text()));
  ok_->setEnabled(!host.isEmpty() && hostError_->text().isEmpty() && !key.isEmpty() &&
                  keyMessage.isEmpty() && interfaceError_->text().isEmpty() &&
                  optionsError_->text().isEmpty());
}

void AddNodeDialog::accept() {
  revalidate();
  if (!ok_->isEnabled()) {
    if (agentKey_->text().trimmed().isEmpty())
      showError(keyError_, tr("Enter the agent's public key."));
    if (host_->text().trimmed().isEmpty()) showError(hostError_, tr("Enter the node's host."));
    return;
  }
  const QString name = name_->text().trimmed();
  const QString host = host_->text().trimmed();
  const QString key = agentKey_->text().trimmed();
  NodeSettings settings;
  settings.networkInterface = networkInterface_->text().trimmed();
  settings.mpirunOptions = mpirunOptions_->text().trimmed();
  settings.clientKeyFile = clientKeyFile_;
  const Status status = isEdit() ? controller_.editNode(nodeId_, name, host, controlPort_->value(),
                                                        eventsPort_->value(), key, settings)
                                 : controller_.addNode(name, host, controlPort_->value(),
                                                       eventsPort_->value(), key, settings);
  if (!status.isOk()) {
    showError(submitError_,
              tr("The node could not be saved: %1").arg(QString::fromStdString(status.message())));
    return;
  }
  QDialog::accept();
}

}  // namespace ringside::gui
