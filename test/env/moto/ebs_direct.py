"""Makes moto 5.2.5's EBS direct APIs (moto/ebs) behave as AWS's where Lifeboat's data mover
depends on them. Applied by launch.py; each fix is checked by test/integration/env/ebs-direct.test.ts.

moto keeps blocks only for snapshots made by StartSnapshot. AWS keeps a volume's data: a volume
created from a snapshot holds its blocks, an EC2 CreateSnapshot of that volume has them, a
StartSnapshot with a parent starts from the parent's. Here a volume carries the block map of the
snapshot it was created from (moto has no way to write to a volume, so its data never changes), and
every EC2 snapshot gets an EBS direct entry with its volume's blocks. Blocks are immutable and shared
between maps by reference, as AWS shares unchanged blocks between snapshots. Each entry also has a
lineage (a StartSnapshot chain, or a volume and the snapshot it came from): ListChangedBlocks
compares only snapshots of one lineage, as AWS does.

Never changes what Lifeboat's code expects: only moto's answers are brought closer to AWS's.
"""

import base64
import hashlib
import json
from typing import Any

from moto.core.exceptions import ServiceException
from moto.core.responses import ActionResult
from moto.ebs import models as ebs_models
from moto.ebs import responses as ebs_responses
from moto.ec2.models import elastic_block_store as ec2_ebs

# AWS: "Each block is 512 KiB" (GetSnapshotBlock / ListSnapshotBlocks BlockSize).
BLOCK_SIZE = 524288
GIB = 1024**3
# AWS ListSnapshotBlocks / ListChangedBlocks: MaxResults 100–10,000; under 100 still returns 100
# (EBS direct APIs FAQ). AWS documents no default; the maximum is used.
MIN_RESULTS = 100
MAX_RESULTS = 10000


class ValidationException(ServiceException):
    """EBS direct APIs' ValidationException (HTTP 400) with its Reason member."""

    code = "ValidationException"

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class ResourceNotFoundException(ServiceException):
    """HTTP 404; AWS's Reason for a missing snapshot is SNAPSHOT_NOT_FOUND."""

    code = "ResourceNotFoundException"

    def __init__(self, snapshot_id: str):
        super().__init__(f"The snapshot '{snapshot_id}' does not exist.")
        self.reason = "SNAPSHOT_NOT_FOUND"


class ConflictException(ServiceException):
    """HTTP 409: a ClientToken reused with different parameters."""

    code = "ConflictException"


def _ebs_backend(account_id: str, region: str) -> Any:
    return ebs_models.ebs_backends[account_id][region]


def _blocks_of(account_id: str, region: str, snapshot_id: str | None) -> dict[int, Any]:
    if not snapshot_id:
        return {}
    entry = _ebs_backend(account_id, region).snapshots.get(snapshot_id)
    return entry.blocks if entry is not None else {}


def _lineage_of(account_id: str, region: str, snapshot_id: str | None) -> str | None:
    if not snapshot_id:
        return None
    entry = _ebs_backend(account_id, region).snapshots.get(snapshot_id)
    return getattr(entry, "lineage", None) if entry is not None else None


def _register(ec2_backend: Any, snapshot: Any, blocks: dict[int, Any], lineage: str) -> None:
    """An EBS direct entry for an EC2 snapshot, completed as moto completes EC2 snapshots at once."""
    entry = ebs_models.EBSSnapshot(account_id=ec2_backend.account_id, snapshot=snapshot)
    entry.status = "completed"
    entry.blocks = dict(blocks)
    entry.written = set()
    entry.lineage = lineage
    _ebs_backend(ec2_backend.account_id, ec2_backend.region_name).snapshots[snapshot.id] = entry


def _patch_ec2() -> None:
    """Fix (a): volumes carry their source snapshot's blocks; EC2 snapshots carry their volume's."""
    original_create_volume = ec2_ebs.EBSBackend.create_volume
    original_create_snapshot = ec2_ebs.EBSBackend.create_snapshot
    original_copy_snapshot = ec2_ebs.EBSBackend.copy_snapshot
    original_delete_snapshot = ec2_ebs.EBSBackend.delete_snapshot

    def create_volume(self: Any, *args: Any, **kwargs: Any) -> Any:
        volume = original_create_volume(self, *args, **kwargs)
        volume.ebs_blocks = dict(_blocks_of(self.account_id, self.region_name, volume.snapshot_id))
        # AWS: snapshots of a volume made from a snapshot are incremental to it (one lineage).
        volume.ebs_lineage = _lineage_of(self.account_id, self.region_name, volume.snapshot_id) or volume.id
        return volume

    def create_snapshot(self: Any, *args: Any, **kwargs: Any) -> Any:
        snapshot = original_create_snapshot(self, *args, **kwargs)
        volume = snapshot.volume
        _register(self, snapshot, getattr(volume, "ebs_blocks", {}), getattr(volume, "ebs_lineage", volume.id))
        return snapshot

    def copy_snapshot(self: Any, source_snapshot_id: str, source_region: str, *args: Any, **kwargs: Any) -> Any:
        snapshot = original_copy_snapshot(self, source_snapshot_id, source_region, *args, **kwargs)
        lineage = _lineage_of(self.account_id, source_region, source_snapshot_id) or snapshot.id
        _register(self, snapshot, _blocks_of(self.account_id, source_region, source_snapshot_id), lineage)
        return snapshot

    def delete_snapshot(self: Any, snapshot_id: str) -> Any:
        snapshot = original_delete_snapshot(self, snapshot_id)
        _ebs_backend(self.account_id, self.region_name).snapshots.pop(snapshot_id, None)
        return snapshot

    ec2_ebs.EBSBackend.create_volume = create_volume
    ec2_ebs.EBSBackend.create_snapshot = create_snapshot
    ec2_ebs.EBSBackend.copy_snapshot = copy_snapshot
    ec2_ebs.EBSBackend.delete_snapshot = delete_snapshot


def _page(
    indexes: list[int], max_results: Any, next_token: str | None, starting_block_index: Any
) -> tuple[list[int], str | None]:
    """Fix (d): MaxResults, NextToken (StartingBlockIndex ignored with a token, as AWS does)."""
    if next_token:
        try:
            start = int(base64.b64decode(next_token, validate=True).decode())
        except ValueError as error:
            raise ValidationException("The pagination token is invalid.", "INVALID_PAGE_TOKEN") from error
    else:
        start = int(starting_block_index or 0)
    limit = MAX_RESULTS if max_results is None else min(MAX_RESULTS, max(MIN_RESULTS, int(max_results)))
    remaining = [i for i in indexes if i >= start]
    page = remaining[:limit]
    more = len(remaining) > limit
    token = base64.b64encode(str(remaining[limit]).encode()).decode() if more else None
    return page, token


def _patch_backend() -> None:
    Backend = ebs_models.EBSBackend
    original_start = Backend.start_snapshot

    def snapshot_entry(self: Any, snapshot_id: str) -> Any:
        # Fix (e), in part: an unknown snapshot is ResourceNotFoundException, not a KeyError (HTTP 500).
        entry = self.snapshots.get(snapshot_id)
        if entry is None:
            raise ResourceNotFoundException(snapshot_id)
        return entry

    def start_snapshot(
        self: Any,
        volume_size: int,
        tags: list[dict[str, str]] | None,
        description: str,
        parent_snapshot_id: str | None = None,
        encrypted: bool | None = None,
        kms_key_arn: str | None = None,
        client_token: str | None = None,
    ) -> Any:
        tokens = self.__dict__.setdefault("lifeboat_client_tokens", {})
        request = json.dumps(
            [volume_size, tags, description, parent_snapshot_id, encrypted, kms_key_arn], sort_keys=True
        )
        if client_token and client_token in tokens:
            # AWS: a retry with the same token returns the original snapshot; other parameters conflict.
            seen_request, snapshot_id = tokens[client_token]
            if seen_request != request:
                raise ConflictException(
                    "The request uses the same client token as a previous, but non-identical request."
                )
            return self.snapshots[snapshot_id]
        # Fix (b): a parent's blocks and encryption; AWS refuses a parent together with Encrypted.
        parent = snapshot_entry(self, parent_snapshot_id) if parent_snapshot_id else None
        if parent is not None and encrypted is not None:
            raise ValidationException(
                "You can't specify ParentSnapshotId and Encrypted in the same request.", "INVALID_PARAMETER_VALUE"
            )
        if parent is not None and parent.status != "completed":
            raise ValidationException(f"The parent snapshot {parent_snapshot_id} is not completed.", "INVALID_SNAPSHOT_ID")
        if parent is not None and int(volume_size) < parent.volume_size:
            raise ValidationException("The volume size is smaller than the parent's.", "INVALID_VOLUME_SIZE")
        entry = original_start(self, volume_size=int(volume_size), tags=tags, description=description)
        ec2_snapshot = self.ec2_backend.get_snapshot(entry.snapshot_id)
        ec2_parent = self.ec2_backend.get_snapshot(parent_snapshot_id) if parent is not None else None
        key = kms_key_arn or (ec2_parent.kms_key_id if ec2_parent is not None else None)
        if encrypted or key or (ec2_parent is not None and ec2_parent.encrypted):
            if key is None:
                if not self.ec2_backend.default_kms_key_id:
                    self.ec2_backend._create_default_encryption_key()
                key = self.ec2_backend.default_kms_key_id
            elif kms_key_arn:
                _require_key(kms_key_arn, self.account_id, self.region_name)
            ec2_snapshot.encrypted = True
            ec2_snapshot.kms_key_id = key
        # AWS: a started snapshot is pending (moto's EC2 side says completed) until CompleteSnapshot.
        ec2_snapshot.status = "pending"
        entry.blocks = dict(parent.blocks) if parent is not None else {}
        entry.written = set()
        entry.parent_snapshot_id = parent_snapshot_id
        entry.lineage = getattr(parent, "lineage", parent.snapshot_id) if parent is not None else entry.snapshot_id
        entry.kms_key_arn = ec2_snapshot.kms_key_id if ec2_snapshot.encrypted else None
        if client_token:
            tokens[client_token] = (request, entry.snapshot_id)
        return entry

    def put_snapshot_block(
        self: Any,
        snapshot_id: str,
        block_index: Any,
        block_data: bytes,
        checksum: str | None,
        checksum_algorithm: str | None,
        data_length: Any,
    ) -> tuple[str | None, str | None]:
        entry = snapshot_entry(self, snapshot_id)
        index = int(block_index)
        if entry.status != "pending":
            raise ValidationException(f"The snapshot {snapshot_id} is not pending.", "INVALID_SNAPSHOT_ID")
        if index < 0 or index * BLOCK_SIZE >= entry.volume_size * GIB:
            raise ValidationException(f"The block index {index} is past the volume's end.", "INVALID_BLOCK")
        # AWS checks the data against its length and SHA-256 checksum; moto took both at face value.
        if data_length is None or int(data_length) != len(block_data) or len(block_data) != BLOCK_SIZE:
            raise ValidationException("The data length must be 524288 bytes.", "INVALID_PARAMETER_VALUE")
        if checksum_algorithm != "SHA256" or checksum != base64.b64encode(hashlib.sha256(block_data).digest()).decode():
            raise ValidationException("The block data does not match its checksum.", "INVALID_PARAMETER_VALUE")
        entry.put_block(index, block_data, checksum, checksum_algorithm, int(data_length))
        entry.written.add(index)
        return checksum, checksum_algorithm

    def complete_snapshot(self: Any, snapshot_id: str, changed_blocks_count: Any = None) -> str:
        entry = snapshot_entry(self, snapshot_id)
        if entry.status == "pending":
            # AWS compares ChangedBlocksCount with the blocks it received; a snapshot that never gets
            # them all fails. Here the blocks are all in at once, so a mismatch fails at once.
            mismatch = changed_blocks_count is not None and int(changed_blocks_count) != len(entry.written)
            entry.status = "error" if mismatch else "completed"
            self.ec2_backend.get_snapshot(snapshot_id).status = entry.status
        return entry.status

    def get_snapshot_block(self: Any, snapshot_id: str, block_index: Any) -> Any:
        entry = snapshot_entry(self, snapshot_id)
        block = entry.blocks.get(int(block_index))
        if block is None:
            # Fix (e): an index without data has no block token, so AWS refuses the request's token.
            raise ValidationException("The block token is invalid.", "INVALID_BLOCK_TOKEN")
        return block

    def list_snapshot_blocks(
        self: Any, snapshot_id: str, max_results: Any = None, next_token: Any = None, starting_block_index: Any = None
    ) -> tuple[Any, list[tuple[int, Any]], str | None]:
        entry = snapshot_entry(self, snapshot_id)
        page, token = _page(sorted(entry.blocks), max_results, next_token, starting_block_index)
        return entry, [(i, entry.blocks[i]) for i in page], token

    def list_changed_blocks(
        self: Any,
        first_snapshot_id: str | None,
        second_snapshot_id: str,
        max_results: Any = None,
        next_token: Any = None,
        starting_block_index: Any = None,
    ) -> tuple[Any, list[tuple[int, Any, Any]], str | None]:
        # Fix (c): blocks in either snapshot (moto iterated only the first), ascending; without a
        # first snapshot, every block of the second.
        second = snapshot_entry(self, second_snapshot_id)
        first = snapshot_entry(self, first_snapshot_id) if first_snapshot_id else None
        if first is not None and getattr(first, "lineage", None) != getattr(second, "lineage", None):
            # AWS compares only snapshots of one lineage: a volume's, its source snapshot's, parents'.
            raise ValidationException("The snapshots are not of the same lineage.", "UNRELATED_SNAPSHOTS")
        first_blocks = first.blocks if first is not None else {}
        changed = []
        for index in sorted(set(first_blocks) | set(second.blocks)):
            a, b = first_blocks.get(index), second.blocks.get(index)
            if a is b or (a is not None and b is not None and a.block_data == b.block_data):
                continue
            changed.append(index)
        page, token = _page(changed, max_results, next_token, starting_block_index)
        return second, [(i, first_blocks.get(i), second.blocks.get(i)) for i in page], token

    Backend.start_snapshot = start_snapshot
    Backend.put_snapshot_block = put_snapshot_block
    Backend.complete_snapshot = complete_snapshot
    Backend.get_snapshot_block = get_snapshot_block
    Backend.list_snapshot_blocks = list_snapshot_blocks
    Backend.list_changed_blocks = list_changed_blocks


def _require_key(key_arn: str, account_id: str, region: str) -> None:
    """AWS refuses a KmsKeyArn it cannot use; here: one that KMS in the ARN's account cannot find."""
    from moto.kms import kms_backends

    parts = key_arn.split(":")
    key_region, key_account = (parts[3], parts[4]) if len(parts) >= 6 and parts[0] == "arn" else (region, account_id)
    try:
        kms_backends[key_account][key_region].describe_key(key_arn)
    except Exception as error:  # moto's KMS raises its own NotFoundException
        raise ValidationException(f"The KMS key {key_arn} cannot be used.", "INVALID_CUSTOMER_KEY") from error


def _patch_responses() -> None:
    Response = ebs_responses.EBSResponse

    def start_snapshot(self: Any) -> ActionResult:
        entry = self.ebs_backend.start_snapshot(
            volume_size=self._get_param("VolumeSize"),
            tags=self._get_param("Tags"),
            description=self._get_param("Description"),
            parent_snapshot_id=self._get_param("ParentSnapshotId"),
            encrypted=self._get_param("Encrypted"),
            kms_key_arn=self._get_param("KmsKeyArn"),
            client_token=self._get_param("ClientToken"),
        )
        result = {
            "SnapshotId": entry.snapshot_id,
            "OwnerId": entry.account_id,
            "Status": entry.status,
            "StartTime": entry.start_time,
            "VolumeSize": entry.volume_size,
            "BlockSize": entry.block_size,
            "Tags": entry.tags,
            "Description": entry.description,
        }
        if getattr(entry, "parent_snapshot_id", None):
            result["ParentSnapshotId"] = entry.parent_snapshot_id
        if getattr(entry, "kms_key_arn", None):
            result["KmsKeyArn"] = entry.kms_key_arn
        return ActionResult(result)

    def complete_snapshot(self: Any) -> ActionResult:
        status = self.ebs_backend.complete_snapshot(
            snapshot_id=self._get_param("SnapshotId"),
            changed_blocks_count=self._get_param("ChangedBlocksCount"),
        )
        return ActionResult({"Status": status})

    def list_snapshot_blocks(self: Any) -> ActionResult:
        entry, blocks, token = self.ebs_backend.list_snapshot_blocks(
            snapshot_id=self._get_param("SnapshotId"),
            max_results=self._get_param("MaxResults"),
            next_token=self._get_param("NextToken"),
            starting_block_index=self._get_param("StartingBlockIndex"),
        )
        result: dict[str, Any] = {
            "Blocks": [{"BlockIndex": i, "BlockToken": b.block_token} for i, b in blocks],
            "VolumeSize": entry.volume_size,
            "BlockSize": entry.block_size,
        }
        if token:
            result["NextToken"] = token
        return ActionResult(result)

    def list_changed_blocks(self: Any) -> ActionResult:
        entry, blocks, token = self.ebs_backend.list_changed_blocks(
            first_snapshot_id=self._get_param("FirstSnapshotId"),
            second_snapshot_id=self._get_param("SecondSnapshotId"),
            max_results=self._get_param("MaxResults"),
            next_token=self._get_param("NextToken"),
            starting_block_index=self._get_param("StartingBlockIndex"),
        )
        changed = []
        for index, first, second in blocks:
            item: dict[str, Any] = {"BlockIndex": index}
            if first is not None:
                item["FirstBlockToken"] = first.block_token
            if second is not None:
                item["SecondBlockToken"] = second.block_token
            changed.append(item)
        result: dict[str, Any] = {
            "ChangedBlocks": changed,
            "VolumeSize": entry.volume_size,
            "BlockSize": entry.block_size,
        }
        if token:
            result["NextToken"] = token
        return ActionResult(result)

    Response.start_snapshot = start_snapshot
    Response.complete_snapshot = complete_snapshot
    Response.list_snapshot_blocks = list_snapshot_blocks
    Response.list_changed_blocks = list_changed_blocks


def apply() -> None:
    _patch_ec2()
    _patch_backend()
    _patch_responses()
