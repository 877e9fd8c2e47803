"""The SYSTEM hive reader (collector/image/regf.py): right values on real-format hives, bounded on hostile ones."""

import contextlib
import os
import struct
import tempfile
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from regipy.registry import RegistryHive

from aitrail.collector.image import regf
from aitrail.collector.image.regf import HiveError, WindowsIdentity, read_system_identity
from tests.collector.hive_writer import (
    BASE_BLOCK_SIZE,
    REG_BINARY,
    REG_DWORD,
    BuiltHive,
    Key,
    Value,
    binary,
    build_hive,
    checksum,
    dword,
    expand_sz,
    sz,
)

CS1 = "ControlSet001"
SERVICES = f"{CS1}\\Services"


def control_set(host: str, zone: str, bias: int, **services: dict) -> dict:
    """A control set as Windows lays it out, with a few unrelated siblings on each path."""
    drivers = {f"Driver{number:02d}": {"Start": dword(3)} for number in range(12)}
    return {
        "Control": {
            "ComputerName": {"ComputerName": {"ComputerName": sz(host)},
                             "ActiveComputerName": {"ComputerName": sz("VOLATILE-ONLY")}},
            "TimeZoneInformation": {"Bias": dword(bias), "DaylightBias": dword(-60),
                                    "StandardName": sz("@tzres.dll,-112"),
                                    "TimeZoneKeyName": sz(zone, after_nul=b"\x12\xd8garbage"),
                                    "DynamicDaylightTimeDisabled": dword(0)},
            "Session Manager": {"BootExecute": sz("autocheck autochk *")},
        },
        "Services": Key({**drivers, "Tcpip": {"Parameters": {"Hostname": sz(host.lower()), "Domain": sz(""),
                                                             "NV Hostname": sz(host.lower())}},
                         **services}, subkey_list="ri", ri_chunk=5),
    }


def system_tree(current: int = 1) -> dict:
    return {
        "Select": {"Current": dword(current), "Default": dword(current), "LastKnownGood": dword(current)},
        CS1: control_set("WIN-ONE", "W. Europe Standard Time", -60),
        "ControlSet002": control_set("WIN-TWO", "Eastern Standard Time", 300),
        "Setup": {"SystemSetupInProgress": dword(0)},
    }


@contextlib.contextmanager
def hive_fd(data: bytes) -> Iterator[int]:
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        yield handle.fileno()


@contextlib.contextmanager
def counted_reads() -> Iterator[dict[str, int]]:
    """Count os.pread calls and bytes; any other way of reading the file fails the test."""
    counts = {"calls": 0, "bytes": 0}
    real_pread = os.pread

    def counting_pread(fd: int, length: int, offset: int) -> bytes:
        data = real_pread(fd, length, offset)
        counts["calls"] += 1
        counts["bytes"] += len(data)
        return data

    def refused(*_args, **_kwargs):
        raise AssertionError("the reader read the hive other than with os.pread")

    with mock.patch.object(regf.os, "pread", counting_pread), mock.patch.object(regf.os, "read", refused), \
            mock.patch.object(regf.os, "lseek", refused), mock.patch("builtins.open", refused):
        yield counts


def identity_of(data: bytes) -> WindowsIdentity:
    with hive_fd(data) as fd:
        return read_system_identity(fd)


def hostile_outcome(data: bytes) -> WindowsIdentity | HiveError:
    """What the reader makes of data: an identity or a HiveError (any other exception fails), within its budgets."""
    with hive_fd(data) as fd, counted_reads() as counts:
        try:
            result: WindowsIdentity | HiveError = read_system_identity(fd)
        except HiveError as exc:
            result = exc
    assert counts["bytes"] <= regf.MAX_READ_BYTES
    assert counts["calls"] <= 2 + 2 * regf.MAX_CELLS
    return result


def problems_of(data: bytes) -> str:
    result = hostile_outcome(data)
    assert isinstance(result, WindowsIdentity), result
    return "\n".join(result.problems)


def cells_of(data: bytes) -> list[tuple[int, int]]:
    """(offset, signed size) of every cell, walking the hive bins; asserts that they tile the hive bins data."""
    bins_size = struct.unpack_from("<I", data, 40)[0]
    found, at = [], 0
    while at < bins_size:
        signature, offset, size = struct.unpack_from("<4sII", data, BASE_BLOCK_SIZE + at)
        assert (signature, offset) == (b"hbin", at) and size % 4096 == 0
        cell = at + 32
        while cell < at + size:
            cell_size = struct.unpack_from("<i", data, BASE_BLOCK_SIZE + cell)[0]
            assert cell_size and abs(cell_size) % 8 == 0
            found.append((cell, cell_size))
            cell += abs(cell_size)
        assert cell == at + size, "cells overrun their hive bin"
        at += size
    assert at == bins_size and len(data) == BASE_BLOCK_SIZE + bins_size
    return found


def node_field(built: BuiltHive, path: str, field_offset: int, value: int) -> bytes:
    """The hive with a 32-bit field of the key node at path (offset within the node, after the size) replaced."""
    return built.patched(built.cells[path] + 4 + field_offset, struct.pack("<I", value))


# --- the writer makes real hives -------------------------------------------------------------------------


def expected_tree(tree: dict | Key) -> dict:
    """The tree as regipy reports it: strings without their NUL, DWORDs as unsigned, binary as bytes."""
    out: dict = {}
    for name, child in (tree.children if isinstance(tree, Key) else tree).items():
        if not isinstance(child, Value):
            out[name] = expected_tree(child)
        elif child.type == REG_DWORD:
            out[name] = struct.unpack("<I", child.data)[0]
        elif child.type == REG_BINARY:
            out[name] = child.data
        else:
            out[name] = child.data.decode("utf-16-le").split("\0")[0]
    return out


def regipy_tree(node) -> dict:
    out: dict = {value.name: value.value for value in node.get_values(trim_values=False)} if node.values_count else {}
    for subkey in node.iter_subkeys() or ():
        out[subkey.name] = regipy_tree(subkey)
    return out


def test_the_writer_makes_hives_regipy_reads_with_the_same_keys_and_values(tmp_path):
    tree = system_tree()
    for name in (CS1, "ControlSet002"):  # regipy keeps what follows a NUL, as hex when it is not text
        tree[name]["Control"]["TimeZoneInformation"]["TimeZoneKeyName"] = sz("UTC")
    tree["Odd"] = Key({
        "Fast": Key({"B": {}, "A": {"Blob": binary(b"\x00\xff" * 40), "Tiny": binary(b"\x01\x02")}}, subkey_list="lf"),
        "Index": Key({"One": {}, "Two": {"Path": expand_sz("%SystemRoot%\\x")}}, subkey_list="li"),
        "Wide": Key({"Ünïcode": Key({"Wert": sz("ja")}, utf16_name=True, utf16_value_names=True)}),
    })
    built = build_hive(tree)
    cells_of(built.data)
    assert struct.unpack_from("<I", built.data, 508)[0] == checksum(built.data[:508])
    (tmp_path / "SYSTEM").write_bytes(built.data)
    hive = RegistryHive(str(tmp_path / "SYSTEM"))
    assert regipy_tree(hive.root) == expected_tree(tree)
    services = hive.get_key(f"\\{SERVICES}")
    assert [key.name for key in services.iter_subkeys()][-1] == "Tcpip"


# --- the values -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("current", "expected"), [
    (1, WindowsIdentity("WIN-ONE", "win-one", "", "W. Europe Standard Time", "@tzres.dll,-112", -60,
                        "ControlSet001", ())),
    (2, WindowsIdentity("WIN-TWO", "win-two", "", "Eastern Standard Time", "@tzres.dll,-112", 300,
                        "ControlSet002", ())),
])
def test_the_identity_comes_from_the_current_control_set(current, expected):
    assert identity_of(build_hive(system_tree(current)).data) == expected


def test_missing_values_and_keys_are_problems_not_exceptions():
    tree = system_tree()
    del tree["Select"]
    del tree[CS1]["Services"].children["Tcpip"]["Parameters"]["Domain"]
    del tree[CS1]["Control"]["TimeZoneInformation"]
    tree[CS1]["Control"]["ComputerName"]["ComputerName"]["ComputerName"] = dword(7)
    identity = identity_of(build_hive(tree).data)
    assert identity == WindowsIdentity(None, "win-one", None, None, None, None, "ControlSet001", identity.problems)
    problems = "\n".join(identity.problems)
    assert "Select : Current: no subkey 'Select' in key 'ROOT'" in problems
    assert "Select : Current: ControlSet001 assumed" in problems
    assert f"{SERVICES}\\Tcpip\\Parameters : Domain: no value 'Domain' in key 'Parameters'" in problems
    for name in ("TimeZoneKeyName", "StandardName", "Bias"):
        assert f"{CS1}\\Control\\TimeZoneInformation : {name}: no subkey 'TimeZoneInformation'" in problems
    assert "ComputerName : ComputerName: int data where str was expected" in problems
    assert len(identity.problems) == 7


def test_a_control_set_number_out_of_range_falls_back_to_1():
    tree = system_tree()
    tree["Select"]["Current"] = dword(0)
    identity = identity_of(build_hive(tree).data)
    assert (identity.control_set, identity.computer_name) == ("ControlSet001", "WIN-ONE")
    assert identity.problems == ("Select : Current: 0 is not a control set number",
                                 "Select : Current: ControlSet001 assumed")


def test_key_and_value_names_match_case_insensitively():
    tree = {
        "SELECT": {"current": dword(1)},
        "controlset001": {
            "CONTROL": {"computername": {"COMPUTERNAME": {"computerNAME": sz("MIXED")}},
                        "timezoneinformation": {"TIMEZONEKEYNAME": sz("UTC"), "standardname": sz("Coordinated"),
                                                "BIAS": dword(0)}},
            "services": {"TCPIP": {"parameters": {"HOSTNAME": sz("mixed"), "domain": sz("corp.example")}}},
        },
    }
    assert identity_of(build_hive(tree).data) == WindowsIdentity(
        "MIXED", "mixed", "corp.example", "UTC", "Coordinated", 0, "ControlSet001", ())


def test_utf16_names_and_every_subkey_list_kind():
    tree = system_tree()
    control = tree[CS1]["Control"]
    tree[CS1]["Control"] = Key({**control, "Ünicode sibling": Key(utf16_name=True)}, utf16_name=True, subkey_list="lf")
    tree[CS1]["Control"].children["ComputerName"] = Key(control["ComputerName"], utf16_name=True, subkey_list="li")
    tree[CS1]["Control"].children["TimeZoneInformation"] = Key(control["TimeZoneInformation"],
                                                             utf16_value_names=True)
    built = build_hive(tree)
    flags = struct.unpack_from("<H", built.data, BASE_BLOCK_SIZE + built.cells[f"{CS1}\\Control"] + 6)[0]
    assert not flags & 0x20
    assert built.data[BASE_BLOCK_SIZE + built.cells[f"{CS1}\\Control:subkeys"] + 4:][:2] == b"lf"
    assert identity_of(built.data) == identity_of(build_hive(system_tree()).data)


def test_index_root_lists_are_followed():
    built = build_hive(system_tree())
    assert built.data[BASE_BLOCK_SIZE + built.cells[f"{SERVICES}:subkeys"] + 4:][:2] == b"ri"
    assert f"{SERVICES}:leaf2" in built.cells  # 13 subkeys in leaves of 5: Tcpip is in the third
    assert identity_of(built.data).hostname == "win-one"


def test_strings_stop_at_the_first_nul_and_indirect_names_are_kept():
    identity = identity_of(build_hive(system_tree()).data)
    assert identity.time_zone_key_name == "W. Europe Standard Time"  # the garbage after its NUL is not valid UTF-16
    assert identity.standard_name == "@tzres.dll,-112"


@pytest.mark.parametrize("bias", [-600, -60, 0, 300, 720])
def test_bias_is_signed(bias):
    tree = system_tree()
    tree[CS1]["Control"]["TimeZoneInformation"]["Bias"] = dword(bias)
    assert identity_of(build_hive(tree).data).bias_minutes == bias


def test_the_internal_reader_decodes_expand_sz_binary_and_dword():
    tree = {"K": {"E": expand_sz("%SystemRoot%"), "B": binary(b"\x00\x01\x02\x03\x04\x05"), "D": dword(0xFFFFFFFF),
                  "I": binary(b"\x09")}}
    with hive_fd(build_hive(tree).data) as fd:
        hive = regf._Hive(fd)
        key = hive.key("k")
        assert [hive.value(key, name) for name in "ebdi"] == ["%SystemRoot%", bytes(range(6)), 0xFFFFFFFF, b"\x09"]


# --- the state of the hive itself --------------------------------------------------------------------------


def test_a_dirty_hive_and_a_bad_checksum_are_said():
    built = build_hive(system_tree(), dirty=True)
    problems = problems_of(built.data)
    assert "hive: dirty (sequence numbers 2 and 1 differ)" in problems
    assert "checksum" not in problems
    problems = problems_of(built.data[:200] + b"\x01" + built.data[201:])
    assert "hive: base block checksum does not match" in problems
    assert identity_of(built.data[:200] + b"\x01" + built.data[201:]).computer_name == "WIN-ONE"


@pytest.mark.parametrize("data", [b"", b"regf", b"regf" + bytes(5000), b"\0" * 8192,
                                  build_hive(system_tree()).data[:4096]])
def test_what_is_not_a_hive_raises_hive_error(data):
    with pytest.raises(HiveError):
        identity_of(data)


def test_a_directory_raises_hive_error(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        with pytest.raises(HiveError, match="reading 4096 bytes at 0"):
            read_system_identity(fd)
    finally:
        os.close(fd)


# --- hostile hives ----------------------------------------------------------------------------------------


def test_truncation_at_any_point_is_an_error_or_a_noted_truncation():
    data = build_hive(system_tree()).data
    used_end = BASE_BLOCK_SIZE + max(offset for offset, size in cells_of(data) if size < 0) + 256
    for cut in [*range(0, used_end, 8), *range(used_end, len(data), 512)]:
        result = hostile_outcome(data[:cut])
        if isinstance(result, WindowsIdentity):
            assert result.problems[0].startswith("hive: truncated"), cut


BUILT = build_hive(system_tree())
USED = [position for offset, size in cells_of(BUILT.data) if size < 0
        for position in range(BASE_BLOCK_SIZE + offset, BASE_BLOCK_SIZE + offset - size)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([*range(0, 64), *USED]), st.integers(0, 255)), min_size=1, max_size=24))
def test_random_byte_changes_never_raise_anything_but_hive_error(changes):
    data = bytearray(BUILT.data)
    for position, byte in changes:
        data[position] = byte
    hostile_outcome(bytes(data))


def test_a_subkey_list_pointing_to_itself_does_not_loop():
    built = build_hive(system_tree())
    root_list = built.cells[f"{SERVICES}:subkeys"]
    ri_to_itself = built.patched(root_list + 4 + 4, struct.pack("<I", root_list))
    assert "points to another index root" in problems_of(ri_to_itself)
    leaf = built.cells[f"{SERVICES}:leaf2"]
    leaf_to_itself = built.data
    for entry in range(3):  # 13 subkeys in leaves of 5: the third holds 3
        leaf_to_itself = BuiltHive(leaf_to_itself, {}).patched(leaf + 4 + 4 + 8 * entry, struct.pack("<I", leaf))
    assert f"cell at {leaf:#x} is not a key node" in problems_of(leaf_to_itself)
    node = built.cells[f"{CS1}\\Control\\ComputerName"]
    node_to_itself = node_field(built, f"{CS1}\\Control\\ComputerName", 28, node)
    assert f"cell at {node:#x} is not a subkey list" in problems_of(node_to_itself)


def test_a_key_listed_as_its_own_subkey_does_not_loop():
    built = build_hive(system_tree())
    path = f"{CS1}\\Control\\ComputerName"
    own_list = built.cells[f"{path}:subkeys"]
    looped = built.patched(own_list + 4 + 4, struct.pack("<II", built.cells[path], 0))
    problems = problems_of(looped)  # ComputerName\ComputerName is now ComputerName itself, which has no values
    assert f"{path}\\ComputerName : ComputerName: no value 'ComputerName' in key 'ComputerName'" in problems


@pytest.mark.parametrize(("size", "message"), [
    (0, "is not allocated (size field 0)"),
    (0x7FFFFFF8, "is not allocated"),
    (-0x7FFFFFF8, "has a size of 2147483640 bytes, outside the hive bins data"),
    (-4, "has a size of 4 bytes, too small for a cell"),
])
def test_a_cell_size_of_0_or_huge_is_a_problem(size, message):
    built = build_hive(system_tree())
    node = built.cells[f"{CS1}\\Control\\ComputerName\\ComputerName"]
    problems = problems_of(built.patched(node, struct.pack("<i", size)))
    assert f"ComputerName : ComputerName: no subkey 'ComputerName' in key 'ComputerName'; 1 damaged entries " \
           f"skipped, the first: cell at {node:#x} {message}" in problems
    with pytest.raises(HiveError, match=message.replace("(", r"\(").replace(")", r"\)")):
        identity_of(built.patched(built.cells[""], struct.pack("<i", size)))


@pytest.mark.parametrize("offset", [0x7FFFFFF0, 0xFFFFFFFF, 0xFFFFFFF0, -4])
def test_offsets_past_the_end_are_problems(offset):
    built = build_hive(system_tree())
    if offset < 0:  # this far from the end of the hive bins data: no room left for a cell
        offset += len(built.data) - BASE_BLOCK_SIZE
    zone = f"{CS1}\\Control\\TimeZoneInformation"
    problems = problems_of(node_field(built, zone, 40, offset))  # the value list offset
    assert f"{zone} : Bias: cell offset {offset:#x} is past the end of the hive bins data" in problems
    data_cell = built.cells[f"{zone}:value:TimeZoneKeyName"]
    problems = problems_of(built.patched(data_cell + 4 + 8, struct.pack("<I", offset)))
    assert f"{zone} : TimeZoneKeyName: cell offset {offset:#x} is past the end" in problems
    with pytest.raises(HiveError, match="past the end"):
        identity_of(built.data[:36] + struct.pack("<I", offset) + built.data[40:])  # the root cell offset


def test_lying_counts_are_problems():
    built = build_hive(system_tree())
    services_list = built.cells[f"{SERVICES}:subkeys"]
    assert "runs past its cell" in problems_of(built.patched(services_list + 4 + 2, b"\xff\xff"))
    zone = f"{CS1}\\Control\\TimeZoneInformation"
    problems = problems_of(node_field(built, zone, 36, 0xFFFFFFFF))  # the value count
    assert f"{zone} : Bias: value list of {regf.MAX_VALUES_PER_KEY} entries runs past its cell" in problems
    value = built.cells[f"{zone}:value:StandardName"]
    problems = problems_of(built.patched(value + 4 + 4, struct.pack("<I", 0x80000010)))
    assert f"{zone} : StandardName: inline data of 16 bytes (at most 4 fit)" in problems
    problems = problems_of(built.patched(value + 4 + 4, struct.pack("<I", 4000)))
    assert f"{zone} : StandardName: data of 4000 bytes runs past its" in problems


def test_big_data_is_not_supported():
    tree = system_tree()
    tree[CS1]["Control"]["ComputerName"]["ComputerName"]["ComputerName"] = sz("X" * 9000)
    identity = identity_of(build_hive(tree).data)
    assert identity.computer_name is None
    assert identity.problems == (f"{CS1}\\Control\\ComputerName\\ComputerName : ComputerName: data of 18002 bytes "
                                 "(big data) is not supported",)


def test_the_budgets_stop_the_reads(monkeypatch):
    data = build_hive(system_tree()).data
    monkeypatch.setattr(regf, "MAX_CELLS", 12)
    assert "cell budget of 12 cells for this hive exhausted" in problems_of(data)
    monkeypatch.setattr(regf, "MAX_CELLS", 100_000)
    monkeypatch.setattr(regf, "MAX_READ_BYTES", 12_000)
    assert "read budget of 12000 bytes for this hive exhausted" in problems_of(data)
    monkeypatch.setattr(regf, "MAX_READ_BYTES", 8 << 20)
    monkeypatch.setattr(regf, "MAX_SUBKEYS_PER_KEY", 4)
    assert "key 'Services' has more than 4 subkeys; the rest were not read" in problems_of(data)


# --- bounded reads ----------------------------------------------------------------------------------------


def test_only_a_bounded_number_of_bytes_is_read_from_a_large_hive(tmp_path):
    built = build_hive(system_tree(), pad_bin=64 << 20)
    cells_of(built.data)
    with hive_fd(built.data) as fd, counted_reads() as counts:
        identity = read_system_identity(fd)
    assert identity.computer_name == "WIN-ONE" and identity.problems == ()
    assert counts["bytes"] < 64 << 10, counts  # of a 64 MiB file
    # A cell claiming most of the file is read no further than the bound for its kind.
    services_list = built.cells[f"{SERVICES}:subkeys"]
    lying = built.patched(services_list, struct.pack("<i", -(32 << 20)))
    with hive_fd(lying) as fd, counted_reads() as counts:
        identity = read_system_identity(fd)
    assert identity.hostname == "win-one"
    assert counts["bytes"] < (64 << 10) + 4 + 8 * regf.MAX_SUBKEYS_PER_KEY, counts
