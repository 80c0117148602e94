#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Make the initramfs that boots one of Debian's kernels (unpacked by kernel-fetch.sh) into this
machine's own root, for vm-boot.sh.

It holds busybox, the modules that mount a virtio-9p share (with the modules they depend on,
in load order, decompressed: busybox insmod reads plain .ko only) and /init. /init mounts the
host's / read-only, gives the guest writable tmpfs where programs write (/tmp, /run, /var/tmp,
/dev/shm), mounts the output share at /tmp/out, the kernel file systems the tracer needs
(tracefs, bpffs, cgroup v1 or v2 as /tmp/out/cgroup says), then chroots into the host's root,
runs /tmp/out/cmd.sh as root, writes its exit status to /tmp/out/rc and powers off.

usage: mkinitramfs.py KERNEL_TREE RELEASE OUTPUT.cpio.gz [BUSYBOX]
(BUSYBOX: a static busybox of the kernel's architecture; /bin/busybox by default)
"""
import gzip
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

# What a virtio-9p root needs; each pulls in its own dependencies.
WANTED = ["virtio_pci", "9pnet_virtio", "9p"]

INIT = r"""#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in /modules/*.ko; do insmod "$m" 2>/dev/null; done
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 hostroot /root; then
	echo "vm: cannot mount the host's root over 9p"; poweroff -f
fi
cd /root
for d in tmp run var/tmp; do mount -t tmpfs tmpfs "$d"; done
mkdir -p tmp/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out tmp/out
mount -t proc proc proc
mount -t sysfs sysfs sys
mount -t devtmpfs devtmpfs dev
mkdir -p dev/pts dev/shm
mount -t devpts devpts dev/pts
mount -t tmpfs tmpfs dev/shm
mount -t tracefs tracefs sys/kernel/tracing
mount -t debugfs debugfs sys/kernel/debug
mount -t bpf bpf sys/fs/bpf
if [ "$(cat tmp/out/cgroup)" = v2 ]; then
	mount -t cgroup2 cgroup2 sys/fs/cgroup
else
	mount -t tmpfs tmpfs sys/fs/cgroup
	for c in memory cpu,cpuacct pids; do
		mkdir -p "sys/fs/cgroup/$c"; mount -t cgroup -o "$c" cgroup "sys/fs/cgroup/$c"
	done
fi
chroot /root /bin/sh -c 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8; hostname vm; cd /tmp/out; sh /tmp/out/cmd.sh; echo $? >/tmp/out/rc'
sync
poweroff -f
"""


def module_order(moddir):
    """The wanted modules and their dependencies, each after what it needs."""
    deps = {}
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            path, needs = line.split(":", 1)
            name = os.path.basename(path).split(".ko")[0].replace("-", "_")
            deps[name] = (path, [os.path.basename(n).split(".ko")[0].replace("-", "_")
                                 for n in needs.split()])
    order = []

    def visit(name):
        if name not in deps or name in order:
            return
        for dep in reversed(deps[name][1]):
            visit(dep)
        order.append(name)

    for name in WANTED:
        visit(name)
    return [(name, deps[name][0]) for name in order]


def main():
    tree, release, output = sys.argv[1:4]
    busybox = sys.argv[4] if len(sys.argv) > 4 else "/bin/busybox"
    moddir = next(d for d in (f"{tree}/lib/modules/{release}", f"{tree}/usr/lib/modules/{release}")
                  if os.path.isdir(d))
    base = moddir[: -len(f"/lib/modules/{release}")] or "/"
    if not os.path.exists(os.path.join(moddir, "modules.dep")):
        subprocess.run(["depmod", "-b", base, release], check=True)
    with tempfile.TemporaryDirectory() as root:
        for d in ("bin", "dev", "proc", "sys", "root", "modules"):
            os.makedirs(os.path.join(root, d))
        shutil.copy(busybox, os.path.join(root, "bin/busybox"))
        for applet in ("sh", "mount", "insmod", "chroot", "poweroff", "mkdir", "cat", "sync"):
            os.symlink("busybox", os.path.join(root, "bin", applet))
        for i, (name, path) in enumerate(module_order(moddir)):
            data = open(os.path.join(moddir, path), "rb").read()
            if path.endswith(".xz"):
                data = lzma.decompress(data)
            open(os.path.join(root, "modules", f"{i:02d}-{name}.ko"), "wb").write(data)
        with open(os.path.join(root, "init"), "w") as f:
            f.write(INIT)
        os.chmod(os.path.join(root, "init"), 0o755)
        files = subprocess.run("find . | LC_ALL=C sort", shell=True, cwd=root, check=True,
                               capture_output=True).stdout
        archive = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files,
                                 check=True, capture_output=True).stdout
    with gzip.open(output + ".partial", "wb", compresslevel=1) as f:
        f.write(archive)
    os.replace(output + ".partial", output)


if __name__ == "__main__":
    main()
