#!/usr/bin/python3
"""delayfs: a FUSE filesystem with one disk image whose every read and write sleeps a
configurable delay, so a loop device over it has an I/O latency a test controls.

  delayfs.py MOUNTPOINT BACKING_FILE SIZE_BYTES DELAY_MS

  MOUNTPOINT/disk.img   the image (data lives in BACKING_FILE, e.g. on /dev/shm)
  MOUNTPOINT/delay_ms   read it for the current delay; write a number to change it at once
  MOUNTPOINT/delay_per_mib_ms  an extra delay in proportion to the size of each read and write
                        (ms per MiB; 0 by default), so big I/Os are slower than small ones
  MOUNTPOINT/fail       write "START END" (bytes): reads overlapping [START, END) fail with EIO;
                        write "clear" to stop
  MOUNTPOINT/hold       write "arm": the next read of the image waits until "release" is
                        written (at most 120 s); read it for "armed", "holding" or "idle"

Mounted with direct_io so every read reaches this daemon (no page cache in between), and
multi-threaded so concurrent I/Os each see the delay rather than queueing behind each other.
Needs Debian's python3-fusepy (libfuse2); run with /usr/bin/python3.
"""
import errno
import os
import stat
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations

IMAGE = "/disk.img"
CONTROL = "/delay_ms"
PER_MIB = "/delay_per_mib_ms"
FAIL = "/fail"
HOLD = "/hold"
CONTROLS = (CONTROL, PER_MIB, FAIL, HOLD)


class DelayFS(Operations):
    def __init__(self, backing, size, delay_ms):
        self.fd = os.open(backing, os.O_RDWR | os.O_CREAT, 0o600)
        os.ftruncate(self.fd, size)
        self.size = size
        self.delay_s = delay_ms / 1000.0
        self.per_mib_s = 0.0
        self.lock = threading.Lock()
        self.now = time.time()
        self.fail_ranges = []
        self.hold_state = "idle"
        self.released = threading.Event()

    def _sleep(self, size):
        delay = self.delay_s + self.per_mib_s * size / (1024.0 * 1024.0)
        if delay > 0:
            time.sleep(delay)

    def getattr(self, path, fh=None):
        base = {"st_uid": 0, "st_gid": 0, "st_atime": self.now, "st_mtime": self.now, "st_ctime": self.now}
        if path == "/":
            return dict(base, st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        if path == IMAGE:
            return dict(base, st_mode=stat.S_IFREG | 0o600, st_nlink=1, st_size=self.size)
        if path in CONTROLS:
            return dict(base, st_mode=stat.S_IFREG | 0o600, st_nlink=1, st_size=64)
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", IMAGE[1:]] + [c[1:] for c in CONTROLS]

    def open(self, path, flags):
        if path != IMAGE and path not in CONTROLS:
            raise FuseOSError(errno.ENOENT)
        return 0

    def read(self, path, size, offset, fh):
        if path == CONTROL:
            text = ("%g\n" % (self.delay_s * 1000.0)).encode()
            return text[offset:offset + size]
        if path == PER_MIB:
            return ("%g\n" % (self.per_mib_s * 1000.0)).encode()[offset:offset + size]
        if path == HOLD:
            return (self.hold_state + "\n").encode()[offset:offset + size]
        if path == FAIL:
            return b""
        with self.lock:
            failing = any(offset < end and offset + size > start for start, end in self.fail_ranges)
            hold = self.hold_state == "armed"
            if hold:
                self.hold_state = "holding"
        if failing:
            raise FuseOSError(errno.EIO)
        if hold:
            self.released.wait(120)
            with self.lock:
                self.hold_state = "idle"
        self._sleep(size)
        return os.pread(self.fd, size, offset)

    def write(self, path, data, offset, fh):
        if path in (CONTROL, PER_MIB):
            try:
                value = float(data.decode().strip())
            except ValueError:
                raise FuseOSError(errno.EINVAL)
            if value < 0 or value > 60000:
                raise FuseOSError(errno.EINVAL)
            if path == CONTROL:
                self.delay_s = value / 1000.0
            else:
                self.per_mib_s = value / 1000.0
            return len(data)
        if path == FAIL:
            words = data.decode().split()
            with self.lock:
                if words == ["clear"]:
                    self.fail_ranges = []
                elif len(words) == 2 and all(w.isdigit() for w in words) and int(words[0]) < int(words[1]):
                    self.fail_ranges.append((int(words[0]), int(words[1])))
                else:
                    raise FuseOSError(errno.EINVAL)
            return len(data)
        if path == HOLD:
            word = data.decode().strip()
            with self.lock:
                if word == "arm":
                    self.released.clear()
                    self.hold_state = "armed"
                elif word == "release":
                    self.released.set()
                    if self.hold_state == "armed":
                        self.hold_state = "idle"
                else:
                    raise FuseOSError(errno.EINVAL)
            return len(data)
        self._sleep(len(data))
        return os.pwrite(self.fd, data, offset)

    def truncate(self, path, length, fh=None):
        if path == IMAGE and length != self.size:
            raise FuseOSError(errno.EINVAL)
        return 0

    def flush(self, path, fh):
        return 0

    def fsync(self, path, datasync, fh):
        return 0

    def release(self, path, fh):
        return 0


def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        sys.exit(2)
    mountpoint, backing, size, delay_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    FUSE(DelayFS(backing, size, delay_ms), mountpoint, foreground=True, nothreads=False, direct_io=True, default_permissions=False)


if __name__ == "__main__":
    main()
