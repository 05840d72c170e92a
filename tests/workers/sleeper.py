"""A task that says hello and then hangs (for the launcher's own test)."""
from __future__ import print_function

import os
import sys
import time

if __name__ == "__main__":
    print("task %s started, pid %d" % (sys.argv[1], os.getpid()))
    sys.stdout.flush()
    if sys.argv[1] == "0":
        time.sleep(3600)
