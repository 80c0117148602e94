# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A module whose function is a unit named python:py_units_mod:solve (found by the import hook)."""
import time


def solve(mib):
    block = bytearray(mib * 1024 * 1024)
    for i in range(0, len(block), 4096):
        block[i] = 1
    time.sleep(0.005)
    return len(block)
