#!/usr/bin/python3
"""delayfs: a FUSE filesystem with one disk image whose every read and write sleeps a
configurable delay, so a loop device over it has an I/O latency a test controls.

  delayfs.py MOUNTPOINT BACKING_FILE SIZE_BYTES DELAY_MS

  MOUNTPOINT/disk.img   the image (data lives in BACKING_FILE, e.g. on /dev/shm)
  MOUNTPOINT/delay_ms   read it for the current delay; write a number to change it at once

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


class DelayFS(Operations):
    def __init__(self, backing, size, delay_ms):
        self.fd = os.open(backing, os.O_RDWR | os.O_CREAT, 0o600)
        os.ftruncate(self.fd, size)
        self.size = size
        self.delay_s = delay_ms / 1000.0
        self.lock = threading.Lock()
        self.now = time.time()

    def _sleep(self):
        delay = self.delay_s
        if delay > 0:
            time.sleep(delay)

    def getattr(self, path, fh=None):
        base = {"st_uid": 0, "st_gid": 0, "st_atime": self.now, "st_mtime": self.now, "st_ctime": self.now}
        if path == "/":
            return dict(base, st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        if path == IMAGE:
            return dict(base, st_mode=stat.S_IFREG | 0o600, st_nlink=1, st_size=self.size)
        if path == CONTROL:
            return dict(base, st_mode=stat.S_IFREG | 0o600, st_nlink=1, st_size=64)
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", IMAGE[1:], CONTROL[1:]]

    def open(self, path, flags):
        if path not in (IMAGE, CONTROL):
            raise FuseOSError(errno.ENOENT)
        return 0

    def read(self, path, size, offset, fh):
        if path == CONTROL:
            text = ("%g\n" % (self.delay_s * 1000.0)).encode()
            return text[offset:offset + size]
        self._sleep()
        return os.pread(self.fd, size, offset)

    def write(self, path, data, offset, fh):
        if path == CONTROL:
            try:
                value = float(data.decode().strip())
            except ValueError:
                raise FuseOSError(errno.EINVAL)
            if value < 0 or value > 60000:
                raise FuseOSError(errno.EINVAL)
            self.delay_s = value / 1000.0
            return len(data)
        self._sleep()
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
