"""Starts the moto AWS emulator for Lifeboat's tests on loopback.

A launcher rather than the bare `moto_server` command, so that fixes for places where moto
differs from AWS in ways our tests depend on can be applied here, pinned to the moto version
in requirements.txt, each with its own test. It never changes what our code expects.
"""

import argparse
import os
import sys


PINNED_MOTO = "5.2.5"

# AWS: "Each block is 512 KiB" (EBS direct APIs, GetSnapshotBlock / ListSnapshotBlocks BlockSize).
EBS_BLOCK_SIZE = 524288


def apply_fixes() -> None:
    """Fixes where moto's answers differ from AWS's. Each one is checked by test/integration/env."""
    from moto.ebs import models as ebs_models

    original_init = ebs_models.EBSSnapshot.__init__

    def init_with_aws_block_size(self, account_id, snapshot):  # type: ignore[no-untyped-def]
        original_init(self, account_id, snapshot)
        # moto reports 512-byte blocks; the EBS direct APIs always use 512 KiB blocks.
        self.block_size = EBS_BLOCK_SIZE

    ebs_models.EBSSnapshot.__init__ = init_with_aws_block_size

    # Block lineage, StartSnapshot's parent/encryption/idempotency, checksums, ListChangedBlocks,
    # pagination and errors of the EBS direct APIs: see ebs_direct.py.
    import ebs_direct

    ebs_direct.apply()

    # Snapshot sharing (createVolumePermission) and KMS grants across accounts: see cross_account.py.
    import cross_account

    cross_account.apply()


def main() -> int:
    parser = argparse.ArgumentParser(description="moto server for Lifeboat tests")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()

    # Default AMIs create EBS snapshots in every region, which pollutes DescribeSnapshots.
    os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
    os.environ["MOTO_PORT"] = str(args.port)

    import moto

    if moto.__version__ != PINNED_MOTO:
        print(f"launch.py: moto {moto.__version__} found, the fixes below are for {PINNED_MOTO}", file=sys.stderr)
        return 2
    apply_fixes()

    # One log line per request costs the single-threaded emulator about a sixth of its CPU in
    # the data mover's benchmark (thousands of 512 KiB block reads). Errors and warnings are
    # still logged; LIFEBOAT_MOTO_REQUEST_LOG=1 brings the request lines back for debugging.
    if os.environ.get("LIFEBOAT_MOTO_REQUEST_LOG") != "1":
        import logging

        logging.getLogger("werkzeug").setLevel(logging.WARNING)

    from moto.server import main as moto_main

    return moto_main(["-H", "127.0.0.1", "-p", str(args.port)]) or 0


if __name__ == "__main__":
    sys.exit(main())
