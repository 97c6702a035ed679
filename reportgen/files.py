"""Files in and out. Only regular files are read; every write is atomic and finished even when a signal comes.

Reading: a named pipe without a writer blocks `open` forever, a device never ends and a socket cannot be opened at
all, so a path is looked at before it is opened (stat), opened without blocking, and looked at again through the
open descriptor (it may have been replaced in between). Anything but a regular file is refused.

Writing: everything is rendered in memory first; each file is then written to a temporary name beside its target and
moved over it with os.replace, which is atomic on POSIX, inside `interrupts.held()` so that a signal waits for the
moves (milliseconds). A failure at any point removes the temporaries and leaves the previous files as they were;
the error names the file and the reason in one line (OutputError).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reportgen import interrupts
from reportgen.errors import OutputError, UsageError

TEMP_PREFIX = ".reportgen-"

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class NotRegularFile(OSError):
    """A path that names something other than a regular file (a folder, pipe, socket or device)."""

    def __init__(self, kind: str, path: Path) -> None:
        super().__init__(f"{kind}, not a regular file")
        self.kind, self.path = kind, path


def kind_of(mode: int) -> str | None:
    """What a file mode names, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


class OutsideFolder(OSError):
    """The file opened is not inside the folder it was checked to be in: a link swapped in after the check."""


def open_regular(path: Path, *, within: Path | None = None) -> io.BufferedReader:
    """The file opened for reading in binary; NotRegularFile, never a wait, for anything but a regular file.
    With `within` (a resolved folder), the file opened, not the path, must lie inside it: a symbolic link swapped in
    between the caller's check of the path and this open cannot take the read outside."""
    kind = kind_of(os.stat(path).st_mode)
    if kind is not None:
        raise NotRegularFile(kind, path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if within is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)  # a resolved path has no link: one there now was swapped in
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if within is not None and error.errno == errno.ELOOP:
            raise OutsideFolder(f"{path} became a symbolic link after it was checked") from None
        raise
    try:
        kind = kind_of(os.fstat(descriptor).st_mode)  # what was opened, if the path changed since the stat
        if kind is not None:
            raise NotRegularFile(kind, path)
        if within is not None and not _opened_inside(descriptor, within):
            raise OutsideFolder(f"{path} now leads outside {within}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _opened_inside(descriptor: int, folder: Path) -> bool:
    """Whether the open file lies in `folder`, by the kernel's own name for it (Linux /proc); True where the
    system has no such name (O_NOFOLLOW still refuses a link at the last step)."""
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{descriptor}"))
    except OSError:
        return True
    return opened.is_relative_to(folder)


def why_unreadable(error: OSError) -> str:
    """One line on why a file could not be read, for a located error."""
    if isinstance(error, OutsideFolder):
        return "was replaced by a symbolic link after it was checked to be in the project file's folder: refused"
    if error.errno == errno.ELOOP:
        return "is a loop of symbolic links"
    if isinstance(error, NotRegularFile):
        return f"is {error.kind}, not a regular file: reportgen reads only regular files"
    if isinstance(error, IsADirectoryError):
        return "is a folder, not a file"
    if isinstance(error, FileNotFoundError):
        return "no such file"
    return f"cannot read: {error.strerror or error}"


# ---------------------------------------------------------------------------------------------------- writing
def new_file_mode() -> int:
    """What open() gives a new file under the current umask (mkstemp's 0600 would hide a report from others).
    Read when a file is written, since a caller may change the umask: from /proc on Linux, else by setting it and
    putting it back at once (the only portable way to read it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            umask = next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0)
        os.umask(umask)
    return 0o666 & ~umask


def output_dir(out_root: Path, stem: str) -> Path:
    """OUT/<stem>, refusing any name that would land elsewhere (a file named "..yaml" has the stem ".")."""
    folder = (out_root / stem).resolve()
    if not stem or stem.startswith(".") or folder.parent != out_root.resolve():
        raise UsageError(f"refusing to write outside {out_root}/: a project file named {stem!r}.yaml has no "
                         "usable output name; rename it")
    return folder


def check_output_folder(folder: Path, option: str = "-o") -> None:
    """Refuse, before any work, an output folder that cannot be one or cannot be written: a file or a path through
    a file (UsageError, exit 2), a folder without write permission (OutputError, exit 1). Nothing is created: a
    build that then fails on its input leaves no empty folder behind."""
    if folder.is_file():
        raise UsageError(f"{option} {folder}: is a file, not a folder; name a folder for the outputs")
    _check_writable(folder, f"{option} {folder}")


def check_output_file(path: Path, option: str) -> None:
    """The same for an output file (`schema -o`, `init`): a folder there is refused, as is a path through a
    file or a folder without write permission."""
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a folder; name the file to write")
    _check_writable(path.parent, f"{option} {path}")


def _check_writable(folder: Path, shown: str) -> None:
    existing = folder
    while not existing.is_dir():  # the nearest folder that exists: outputs are created in it
        if existing.exists():
            raise UsageError(f"{shown}: goes through {existing}, which is a file, not a folder")
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == folder else f" (it would be created in {existing})"
        raise OutputError(f"{shown}: no permission to write there{where}; choose another folder")


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on a folder for the read-modify-write of a file in it. Every writer of a project's CSV
    (`measure`, each `ingest`) takes it around reading, checking and replacing the file, so that concurrent writers
    never lose each other's rows. An advisory flock on the folder itself: no lock file is left behind, and the
    kernel releases it when the process dies."""
    import fcntl

    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # a signal while waiting interrupts it (PEP 475 runs the handler)
        yield
    finally:
        os.close(descriptor)


def make_folder(folder: Path) -> None:
    """The folder and its parents, created where missing (OutputError when that cannot be done)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"cannot create {folder}: {error.strerror or error}") from None


def write_files(folder: Path, files: dict[str, bytes]) -> list[Path]:
    """Write every file of `files` (name → bytes) into `folder`, all or none (each file old or new, never
    partial); the temporaries are gone afterwards."""
    make_folder(folder)
    remove_stale_temporaries(folder)
    with _staged(folder, files) as staged, interrupts.held():
        backups = _backups([target for _, target in staged])
        moved: list[Path] = []
        try:
            for temporary, target in staged:
                _move(temporary, target)
                moved.append(target)
        except OutputError:  # a move failed midway: the ones made are undone, so no new file sits beside old ones
            _roll_back(moved, backups)
            raise
        finally:
            for backup in backups.values():
                with contextlib.suppress(OSError):
                    backup.unlink()
    return [target for _, target in staged]


def _backups(targets: list[Path]) -> dict[Path, Path]:
    """A hard link to each existing target, under a temporary's name: what a failed set of moves restores. Without
    hard links (some file systems) there are none, and a move that fails midway is reported as such."""
    import tempfile

    out: dict[Path, Path] = {}
    for target in targets:
        if not target.is_file():
            continue
        name = tempfile.mktemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=f".{target.name}.old",
                               dir=target.parent)
        with contextlib.suppress(OSError):
            os.link(target, name)
            out[target] = Path(name)
    return out


def _roll_back(moved: list[Path], backups: dict[Path, Path]) -> None:
    for target in moved:
        with contextlib.suppress(OSError):
            if target in backups:
                os.replace(backups.pop(target), target)
            else:
                target.unlink()


def replace_file(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Replace (or create) one file atomically, keeping an existing file's permissions. `sync` False skips
    waiting for the disk, for a file whose loss in a power cut costs nothing (a cache entry)."""
    mode = path.stat().st_mode & 0o777 if path.exists() else new_file_mode()
    with _staged(path.parent, {path.name: data}, mode=mode, sync=sync) as staged, interrupts.held():
        _move(*staged[0])


def shown_path(path: Path | str) -> str:
    """A path as text to show (in a report, a JSON document, a message): bytes of its name that are not UTF-8 (held
    by Python as lone surrogates) shown as U+FFFD, which every UTF-8 writer can encode."""
    return os.fsencode(path).decode("utf-8", "replace")


def here(path: Path | str) -> str:
    """A path as a command's message shows it: relative to the current folder where it lies under it (as the user
    would type it next), else as it is."""
    try:
        return shown_path(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):
        return shown_path(path)


@dataclass(frozen=True)
class ReadCopy:
    """A file's bytes and the identity they were read under (docs/measurements.md#moving-inline-runs-to-a-csv):
    what replace_unchanged checks the file against before it replaces it."""

    data: bytes
    device: int
    inode: int
    size: int
    mtime_ns: int

    def matches(self, status: os.stat_result) -> bool:
        return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns) == \
            (self.device, self.inode, self.size, self.mtime_ns)


def read_copy(path: Path) -> ReadCopy:
    """The file's bytes, with its identity taken before reading them: a save that lands while they are read
    changes the identity, so replace_unchanged refuses."""
    with open_regular(path) as handle:
        status = os.fstat(handle.fileno())
        data = handle.read()
    return ReadCopy(data, status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def replace_unchanged(path: Path, data: bytes, read: ReadCopy) -> None:
    """Replace a file the user edits (a project file) with `data`, atomically, only if it is still the file that
    was read: the same bytes, inode, size and modification time. An editor's or another command's save in
    between is refused (OutputError naming the file) and kept, never overwritten. A symbolic link is written
    through: its target is replaced and the link kept. The check and the move run back to back with signals held;
    a save in the microseconds between them is the only one that can still be lost."""
    target = Path(os.path.realpath(path))
    mode = target.stat().st_mode & 0o777
    with _staged(target.parent, {target.name: data}, mode=mode) as staged, interrupts.held():
        if not _still(target, read):
            raise OutputError(f"{path} changed on disk since reportgen read it (saved by an editor or another "
                              "command?): it was left as it is now and nothing was written; run the command again")
        _move(*staged[0])


def check_replaceable(path: Path) -> None:
    """Refuse, before anything is written, a file that the system will not let be replaced, or a folder in which
    what is written cannot be removed again: immutable or append-only (chattr +i, +a), as the file system says
    (Linux); OutputError naming which. A command that writes beside the file first (runs export's CSV) would
    otherwise be left half done."""
    target = Path(os.path.realpath(path))
    for what, flags in (("it", _inode_flags(target)), (f"its folder {target.parent}", _inode_flags(target.parent))):
        for flag, name in ((_IMMUTABLE, "immutable (chattr +i)"), (_APPEND_ONLY, "append-only (chattr +a)")):
            if flags & flag:
                raise OutputError(f"cannot write {path}: {what} is {name}; nothing was written")


def _still(path: Path, read: ReadCopy) -> bool:
    """Whether the file at `path` is the one `read` was taken from, unchanged."""
    try:
        if not read.matches(os.stat(path)):
            return False
        with open_regular(path) as handle:
            return handle.read(read.size + 1) == read.data and read.matches(os.fstat(handle.fileno()))
    except OSError:  # gone, or replaced by something that cannot be read
        return False


def create_file(path: Path, data: bytes) -> None:
    """Create a file that must not exist yet (FileExistsError if it does, even if it appeared a moment ago)."""
    with _staged(path.parent, {path.name: data}) as staged, interrupts.held():
        try:
            os.link(staged[0][0], path)  # unlike a rename, a link never replaces what is there
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: a rename, once more sure that nothing is there
            if path.exists():
                raise FileExistsError(path) from None
            _move(staged[0][0], path)


def _move(temporary: Path, target: Path) -> None:
    try:
        os.replace(temporary, target)
    except OSError as error:  # the target is a folder, say, or permissions changed meanwhile
        why = f"; {_why_not_permitted(temporary, target)}" if error.errno == errno.EPERM else ""
        raise OutputError(f"cannot write {target}: {error.strerror or error}{why}") from None


# Linux's inode flags (FS_IOC_GETFLAGS, linux/fs.h): what `chattr +i` and `chattr +a` set
_GET_FLAGS, _IMMUTABLE, _APPEND_ONLY = 0x80086601, 0x10, 0x20


def _why_not_permitted(temporary: Path, target: Path) -> str:
    """What refused a rename that permissions allowed (EPERM), found by looking rather than guessed: the file in
    the way is immutable or append-only (chattr +i, +a), the folder is append-only (then the temporary cannot be
    removed either), or, failing all of these, another user's file in a folder with the sticky bit."""
    flags = _inode_flags(target)
    if flags & _IMMUTABLE:
        return f"{target.name} is immutable (chattr +i): it was left as it was; `chattr -i` it to let it be replaced"
    if flags & _APPEND_ONLY:
        return f"{target.name} is append-only (chattr +a): it was left as it was"
    try:
        temporary.unlink()
    except OSError:
        return ("the folder lets files be created but not renamed or removed (append-only, chattr +a?): the "
                "temporaries named .reportgen-* there could not be removed either")
    return (f"{target.name} may not be replaced by this user (another user's file in a folder with the sticky bit, "
            "or a file system that refuses renames): it was left as it was")


def _inode_flags(path: Path) -> int:
    """The file's inode flags where the system says (Linux), else 0."""
    try:
        import fcntl
        import struct

        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except (ImportError, OSError):
        return 0
    try:
        return int(struct.unpack("i", fcntl.ioctl(descriptor, _GET_FLAGS, struct.pack("i", 0)))[0])
    except OSError:
        return 0
    finally:
        os.close(descriptor)


@contextmanager
def _staged(folder: Path, files: dict[str, bytes], *, mode: int | None = None,
            sync: bool = True) -> Iterator[list[tuple[Path, Path]]]:
    """Each file written (and synced to disk, unless told otherwise) to a temporary name in `folder`, as
    (temporary, target) pairs; whatever is left of the temporaries is removed afterwards."""
    import tempfile  # here, not at the top: `check` reads through this module and writes nothing (8 ms saved)

    staged: list[tuple[Path, Path]] = []
    mode = new_file_mode() if mode is None else mode
    try:
        for name, data in files.items():
            try:
                with interrupts.held():  # never a temporary that is not listed for removal
                    handle, temporary = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=f".{name}",
                                                         dir=folder)
                    staged.append((Path(temporary), folder / name))
                with os.fdopen(handle, "wb") as stream:
                    os.fchmod(handle, mode)
                    stream.write(data)
                    stream.flush()
                    if sync:
                        os.fsync(handle)
            except OSError as error:  # a full disk, a read-only or vanished folder
                raise OutputError(f"cannot write {folder / name}: {error.strerror or error}; "
                                  "the files there are as they were") from None
        yield staged
    finally:
        with interrupts.held():
            for leftover, _ in staged:
                with contextlib.suppress(OSError):  # gone (moved), or a folder that forbids removal (append-only)
                    leftover.unlink()


def remove_stale_temporaries(folder: Path) -> None:
    """Temporaries left by a process killed (SIGKILL) between staging and moving: those whose writer (the process
    id in the name) is gone. Another build writing into the same folder at the same time keeps its own: removing
    them failed it ("cannot write …results.json")."""
    for stale in folder.glob(f"{TEMP_PREFIX}*"):
        owner = stale.name.removeprefix(TEMP_PREFIX).split("-", 1)[0]
        if owner.isdigit() and _alive(int(owner)) and time.time() - _mtime(stale) < STALE_SECONDS:
            continue
        with contextlib.suppress(OSError):
            stale.unlink()


STALE_SECONDS = 24 * 3600  # a temporary this old is stale whatever its name says (a process id can be reused)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
