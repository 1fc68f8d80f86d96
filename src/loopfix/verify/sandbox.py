"""The sandbox of a verification run: no network, home and caches in the run's own folder,
offline libraries, and do-nothing stand-ins for missing logging and plotting packages.

loopfix's side (`environment`) redirects `HOME`, the XDG folders, `TORCH_HOME`, `HF_HOME`,
`MPLCONFIGDIR` and the temporary folder into the run's temporary folder and sets the common
libraries' offline switches. The child's side (`enter`, called before user code) cuts the
network: on Linux a new network namespace (entered through a new user namespace when not
root, as `unshare -rn` does) when the kernel allows it, and always a guard that refuses socket
connections other than local (`AF_UNIX`) ones, so that a refused connection says why. What it
used is recorded in the trace (`"network namespace"` or `"socket guard"`).

Limits: files are protected by the working folder, the redirected variables and the temporary
copy of the script, not by the kernel; a script writing to an absolute path it names itself
(outside its project) can still write there.
"""

from __future__ import annotations

import ctypes
import errno
import importlib.abc
import importlib.machinery
import os
import socket
import sys
import tempfile
import types
from pathlib import Path

# redirected into the run's folder: a model download or cache write lands there
REDIRECTED = {
    "HOME": "home",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_DATA_HOME": "home/.local/share",
    "TORCH_HOME": "home/.cache/torch",
    "HF_HOME": "home/.cache/huggingface",
    "MPLCONFIGDIR": "home/.config/matplotlib",
    "TMPDIR": "tmp",
    "TEMP": "tmp",
    "TMP": "tmp",
}
# the offline switches of the libraries training code commonly calls
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "WANDB_MODE": "disabled",
    "WANDB_SILENT": "true",
    "COMET_MODE": "disabled",
    "NEPTUNE_MODE": "offline",
    "MLFLOW_TRACKING_URI": "file:./mlruns",
    "MPLBACKEND": "Agg",
    "DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
}
# packages used only to log, plot or show progress: a missing one is stood in for
OPTIONAL = frozenset(
    {"matplotlib", "seaborn", "plotly", "tensorboard", "tensorboardX", "wandb", "visdom",
     "tqdm", "mlflow", "comet_ml", "neptune", "termcolor", "colorama"}
)  # fmt: skip
NETWORK_NAMESPACE = "network namespace"
SOCKET_GUARD = "socket guard"


def environment(workdir: Path) -> dict[str, str]:
    """The variables of a run in `workdir`; their folders are created."""
    values = {}
    for name, relative in REDIRECTED.items():
        folder = workdir / ".sandbox" / relative
        folder.mkdir(parents=True, exist_ok=True)
        values[name] = str(folder)
    return values | OFFLINE


# ------------------------------------------------------------------------- the child's side
def enter() -> str:
    """Cut the network for this process and its children; what was used."""
    kind = NETWORK_NAMESPACE if _new_network_namespace() else SOCKET_GUARD
    _guard_sockets()
    tempfile.tempdir = None  # a fork keeps its parent's choice: take TMPDIR's again
    sys.meta_path.append(_OptionalPackages())
    return kind


CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000


def _new_network_namespace() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    if os.geteuid() == 0 and libc.unshare(CLONE_NEWNET) == 0:
        return True
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return False
    try:  # map ourselves, so that files we create keep their owner
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    except OSError:
        pass
    return True


def _refused(*args, **kwargs):
    raise OSError(errno.ENETUNREACH, "network access is disabled during loopfix verification")


def _guard_sockets() -> None:
    original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def connect(self, address):
        if self.family == getattr(socket, "AF_UNIX", None):
            return original_connect(self, address)
        return _refused()

    def connect_ex(self, address):
        if self.family == getattr(socket, "AF_UNIX", None):
            return original_connect_ex(self, address)
        return errno.ENETUNREACH

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    socket.create_connection = _refused
    socket.getaddrinfo = _refused


class _OptionalPackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on the import path: a missing logging, plotting or progress package (and any of
    its submodules) imports as a do-nothing stand-in; `tqdm` passes its iterable through."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in OPTIONAL:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _StandIn(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        if module.__name__.partition(".")[0] == "tqdm":
            module.tqdm, module.trange = _tqdm, _trange


class _Nothing:
    """Whatever is asked of it: nothing, quietly."""

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0


class _StandIn(types.ModuleType):
    __loopfix_stand_in__ = True

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Nothing()


class _Progress(_Nothing):
    def __init__(self, iterable=None, *args, **kwargs) -> None:
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable if self.iterable is not None else ())

    def __len__(self) -> int:
        return len(self.iterable) if self.iterable is not None else 0


def _tqdm(iterable=None, *args, **kwargs):
    return _Progress(iterable)


def _trange(*args, **kwargs):
    return _Progress(range(*args))
