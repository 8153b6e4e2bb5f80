"""Ringside's PyTorch side: join the process group from the launcher's environment and watch a
DistributedDataParallel model (docs/pytorch.md).

    info = ringside.torch.init_process_group()
    model = DistributedDataParallel(net.to(info.device), device_ids=info.device_ids)
    ringside.torch.watch(model, global_batch=256)

The only module of the ``ringside`` package that imports ``torch``; it works with PyTorch 1.13
(Debian 12's python3-torch) and 2.x.
"""

from ._process_group import ProcessGroupInfo, init_process_group
from ._watch import Watcher, watch

__all__ = ["init_process_group", "ProcessGroupInfo", "watch", "Watcher"]
