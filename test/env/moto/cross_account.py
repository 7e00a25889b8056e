"""Makes moto 5.2.5 honour EBS snapshot sharing and KMS grants across accounts, as AWS does.
Applied by launch.py after ebs_direct.py; checked by test/integration/env/cross-account.test.ts.

moto records ModifySnapshotAttribute's createVolumePermission but never reads it back, and it looks
a CopySnapshot's or CreateVolume's snapshot up in the caller's own account only. AWS lets another
account see a snapshot exactly when the owner shared it (a user id or the `all` group) and, for a
snapshot encrypted with a customer key, copy it or make a volume of it only when that account may
use the key (here: a KMS grant on the key whose grantee is in the caller's account, allowing Decrypt).
moto also drops the volume's key from a snapshot of an encrypted volume; AWS keeps it.
So here: a snapshot of another account is found in that account's backend of the region, refused as
`InvalidSnapshot.NotFound` (what AWS answers for a snapshot not shared with the caller) without the
share, and refused as `UnauthorizedOperation` without the grant. Own snapshots are untouched.

Never changes what Lifeboat's code expects: only moto's answers are brought closer to AWS's.
"""

from typing import Any

from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models import elastic_block_store as ec2_ebs

import ebs_direct

# AWS: the operations a grantee needs to copy, or make a volume of, a snapshot under another's key.
NEEDED_OPERATION = "Decrypt"


def _ec2_backends() -> Any:
    from moto.ec2.models import ec2_backends

    return ec2_backends


def _snapshot_owned_elsewhere(caller: str, region: str, snapshot_id: str) -> Any:
    """The snapshot of another account in this region, or None when no account has it."""
    backends = _ec2_backends()
    for account_id in list(backends.keys()):
        if account_id == caller:
            continue
        backend = backends[account_id].get(region) if hasattr(backends[account_id], "get") else None
        snapshot = backend.snapshots.get(snapshot_id) if backend is not None else None
        if snapshot is not None:
            return snapshot
    return None


def _shared_with(snapshot: Any, caller: str) -> bool:
    return caller in snapshot.create_volume_permission_userids or "all" in snapshot.create_volume_permission_groups


def _grantee_account(principal: str) -> str | None:
    """The account of a grantee principal: an account id, or an ARN's fifth field."""
    if principal.isdigit():
        return principal
    parts = principal.split(":")
    return parts[4] if len(parts) >= 6 and parts[0] == "arn" else None


def _require_key_grant(snapshot: Any, caller: str, region: str) -> None:
    """A customer key of another account: usable by the caller only through a grant for its account."""
    key_id = snapshot.kms_key_id
    if not snapshot.encrypted or not key_id:
        return
    from moto.kms import kms_backends

    parts = str(key_id).split(":")
    key_region, key_account = (parts[3], parts[4]) if len(parts) >= 6 and parts[0] == "arn" else (region, snapshot.owner_id)
    if key_account == caller:
        return
    denied = EC2ClientError(
        "UnauthorizedOperation",
        f"The snapshot {snapshot.id} is encrypted with KMS key {key_id}, which account {caller} "
        "has no grant to use (kms:Decrypt).",
    )
    try:
        key = kms_backends[key_account][key_region].describe_key(key_id)
    except Exception as error:  # moto's KMS raises its own NotFoundException
        raise denied from error
    for grant in key.grants.values():
        if _grantee_account(grant.grantee_principal) == caller and NEEDED_OPERATION in grant.operations:
            return
    raise denied


def _shared_snapshot(caller: str, region: str, snapshot_id: str) -> Any:
    """Another account's snapshot the caller may use, or AWS's refusal."""
    snapshot = _snapshot_owned_elsewhere(caller, region, snapshot_id)
    if snapshot is None or not _shared_with(snapshot, caller):
        raise EC2ClientError("InvalidSnapshot.NotFound", f"The snapshot '{snapshot_id}' does not exist.")
    _require_key_grant(snapshot, caller, region)
    return snapshot


def _ebs_entry(snapshot: Any, region: str) -> Any:
    return ebs_direct._ebs_backend(snapshot.owner_id, region).snapshots.get(snapshot.id)


def apply() -> None:
    original_copy_snapshot = ec2_ebs.EBSBackend.copy_snapshot
    original_create_volume = ec2_ebs.EBSBackend.create_volume
    original_create_snapshot = ec2_ebs.EBSBackend.create_snapshot

    def create_snapshot(self: Any, *args: Any, **kwargs: Any) -> Any:
        snapshot = original_create_snapshot(self, *args, **kwargs)
        # AWS: a snapshot of an encrypted volume is encrypted with the volume's key (moto drops it).
        if snapshot.encrypted and not snapshot.kms_key_id:
            snapshot.kms_key_id = getattr(snapshot.volume, "kms_key_id", None)
        return snapshot

    def copy_snapshot(
        self: Any, source_snapshot_id: str, source_region: str, description: str, kms_key_id: str | None
    ) -> Any:
        own = _ec2_backends()[self.account_id][source_region].snapshots
        if source_snapshot_id in own:
            return original_copy_snapshot(self, source_snapshot_id, source_region, description, kms_key_id)
        source = _shared_snapshot(self.account_id, source_region, source_snapshot_id)
        if kms_key_id:
            # AWS refuses a destination key the caller cannot use in its own region.
            ebs_direct._require_key(kms_key_id, self.account_id, self.region_name)
        snapshot = ec2_ebs.Snapshot(
            self,
            ec2_ebs.random_snapshot_id(),
            volume=source.volume,
            description=description,
            encrypted=source.encrypted,
            kms_key_id=kms_key_id,
        )
        self.snapshots[snapshot.id] = snapshot
        entry = _ebs_entry(source, source_region)
        blocks = entry.blocks if entry is not None else {}
        ebs_direct._register(self, snapshot, blocks, getattr(entry, "lineage", None) or snapshot.id)
        return snapshot

    def create_volume(self: Any, *args: Any, **kwargs: Any) -> Any:
        snapshot_id = kwargs.get("snapshot_id")
        if not snapshot_id:
            return original_create_volume(self, *args, **kwargs)
        own = self.snapshots.get(snapshot_id)
        source = own or _shared_snapshot(self.account_id, self.region_name, snapshot_id)
        # AWS: a volume of an encrypted snapshot, no key named, has the snapshot's key (moto: the default).
        if source.encrypted and not kwargs.get("kms_key_id") and source.kms_key_id:
            kwargs = {**kwargs, "encrypted": True, "kms_key_id": source.kms_key_id}
        if own is not None:
            return original_create_volume(self, *args, **kwargs)
        encrypted = bool(kwargs.get("encrypted")) or source.encrypted
        size = kwargs.get("size") or source.volume.size
        volume = original_create_volume(
            self, *args, **{**kwargs, "snapshot_id": None, "size": size, "encrypted": encrypted}
        )
        volume.snapshot_id = snapshot_id
        entry = _ebs_entry(source, self.region_name)
        volume.ebs_blocks = dict(entry.blocks) if entry is not None else {}
        volume.ebs_lineage = getattr(entry, "lineage", None) or volume.id
        return volume

    ec2_ebs.EBSBackend.copy_snapshot = copy_snapshot
    ec2_ebs.EBSBackend.create_volume = create_volume
    ec2_ebs.EBSBackend.create_snapshot = create_snapshot
