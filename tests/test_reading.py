"""read_text: every skip reason, decoding and newline normalisation."""

from __future__ import annotations

import codecs
import hashlib
import os
import sys
import time

import pytest

from kenning.core import confine
from kenning.core.confine import SourceRoot
from kenning.ingest import reading
from kenning.ingest.filetypes import classify, is_test_path
from kenning.ingest.reading import read_text as read_below

CAP = 1_000_000


def read_text(path, cap, root=None):
    """Read a file as the indexer does: from its folder's descriptor, by name."""
    root = root or SourceRoot(str(path.parent))
    try:
        return read_below(root, [path.name], cap)
    finally:
        root.close()


def test_plain_utf8_reads_with_hash_and_size(tmp_path):
    raw = "héllo\r\nwörld\rend\n".encode()
    path = tmp_path / "a.txt"
    path.write_bytes(raw)
    result = read_text(path, CAP)
    assert result.ok and result.skip_reason is None
    assert result.text == "héllo\nwörld\nend\n"
    assert result.raw_sha256 == hashlib.sha256(raw).hexdigest()
    assert result.size == len(raw)


def test_utf8_bom_is_stripped(tmp_path):
    path = tmp_path / "bom.md"
    path.write_bytes(codecs.BOM_UTF8 + b"# Title\n")
    assert read_text(path, CAP).text == "# Title\n"


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_bom_decode(tmp_path, codec):
    path = tmp_path / "wide.txt"
    body = "Grüße, 世界 🎉\r\nline two\n"
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(codec, b"")
    path.write_bytes(bom + body.encode(codec))  # "utf-16"/"utf-32" write their own BOM
    result = read_text(path, CAP)
    assert result.skip_reason is None, result.detail
    assert result.text == "Grüße, 世界 🎉\nline two\n"


def test_empty_file_is_not_a_skip(tmp_path):
    path = tmp_path / "empty.md"
    path.write_bytes(b"")
    result = read_text(path, CAP)
    assert result.text == "" and result.skip_reason is None and result.size == 0
    assert result.raw_sha256 == hashlib.sha256(b"").hexdigest()


def test_binary_with_text_extension(tmp_path):
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    result = read_text(path, CAP)
    assert result.skip_reason == "binary" and result.text is None
    assert result.raw_sha256  # it was read, so the hash is known


def test_many_control_characters_is_binary(tmp_path):
    path = tmp_path / "ctl.txt"
    path.write_bytes(b"\x01\x02\x03\x04abc" * 200)
    assert read_text(path, CAP).skip_reason == "binary"


def test_damaged_utf8_is_undecodable(tmp_path):
    path = tmp_path / "broken.md"
    path.write_bytes("café crème ".encode() + b"\xed\xa0\x80 \xc0\xaf")
    result = read_text(path, CAP)
    assert result.skip_reason == "undecodable" and result.text is None
    assert "damaged UTF-8" in result.detail


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("Café crème brûlée, naïve façade: les élèves étudient à l'école.\n", "latin-1"),
        ("Grüße aus München, schöne Straße\n", "latin-1"),
        ("“Smart quotes” – a dash and the € sign\n", "cp1252"),
        ("Привет, мир! Это заметка в старой кодировке Windows для русского текста.\n" * 3, "cp1251"),
    ],
)
def test_legacy_encodings_are_detected(tmp_path, text, codec):
    path = tmp_path / "old.txt"
    path.write_bytes(text.encode(codec))
    result = read_text(path, CAP)
    assert result.ok, result.detail
    assert result.text == text


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_is_decoded(tmp_path, codec):
    text = "# Notes in UTF-16\n\nWindows Notepad wrote these words without a byte order mark.\n"
    path = tmp_path / "notepad.txt"
    path.write_bytes(text.encode(codec))
    result = read_text(path, CAP)
    assert result.ok, result.detail
    assert result.text == text


def test_bytes_no_encoding_explains_are_skipped(tmp_path):
    path = tmp_path / "noise.txt"
    path.write_bytes(bytes(range(0x80, 0x100)) * 40)
    result = read_text(path, CAP)
    assert result.skip_reason in ("undecodable", "binary"), result


def test_file_over_cap_is_too_large(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 101)
    assert read_text(path, 100).skip_reason == "too-large"
    assert read_text(path, 101).text == "x" * 101


def test_sparse_gigabyte_file_is_refused_without_reading(tmp_path, monkeypatch):
    path = tmp_path / "huge.log"
    with open(path, "wb") as handle:
        handle.truncate(1 << 30)

    def no_reading(*args, **kwargs):
        raise AssertionError("read a file that is over the cap")

    monkeypatch.setattr(reading, "read_at_most", no_reading)
    started = time.perf_counter()
    result = read_text(path, 10 * 1024 * 1024)
    assert time.perf_counter() - started < 10.0  # it must not read 1 GiB; the bound only has to tell that apart
    assert result.skip_reason == "too-large"
    assert result.size == 1 << 30 and result.text is None and result.raw_sha256 == ""


def test_missing_file_is_vanished(tmp_path):
    result = read_text(tmp_path / "gone.md", CAP)
    assert result.skip_reason == "vanished" and result.text is None


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root (or Windows) reads mode-000 files")
def test_permission_denied_is_unreadable(tmp_path):
    path = tmp_path / "secret.md"
    path.write_text("private")
    path.chmod(0)
    try:
        assert read_text(path, CAP).skip_reason == "unreadable"
    finally:
        path.chmod(0o600)


def test_os_error_on_open_is_unreadable(tmp_path, monkeypatch):
    # Runs everywhere, root included: the open itself is made to fail.
    path = tmp_path / "secret.md"
    path.write_text("private")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    root = SourceRoot(str(tmp_path))
    monkeypatch.setattr(reading.os, "open", denied)
    result = read_text(path, CAP, root)
    assert result.skip_reason == "unreadable" and "Permission" in result.detail


def test_directory_is_unreadable(tmp_path):
    assert read_text(tmp_path, CAP).skip_reason == "unreadable"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_unreadable_and_does_not_block(tmp_path):
    path = tmp_path / "pipe.md"
    os.mkfifo(path)
    assert read_text(path, CAP).skip_reason == "unreadable"


# --- file types ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("notes/a.md", "markdown"),
        ("x/B.MARKDOWN", "markdown"),
        ("doc.mdx", "markdown"),
        ("a.txt", "text"),
        ("docs/index.rst", "text"),
        ("todo.org", "text"),
        ("README", "text"),
        ("LICENSE", "text"),
        ("CHANGELOG", "text"),
        ("LICENSE-MIT", "text"),
        ("app/search/fusion.py", "code:python"),
        ("web/App.tsx", "code:tsx"),
        ("main.go", "code:go"),
        ("lib.rs", "code:rust"),
        ("Makefile", "code:make"),
        ("Dockerfile", "code:dockerfile"),
        ("CMakeLists.txt", "code:cmake"),
        ("config.yml", "code:yaml"),
        ("pyproject.toml", "code:toml"),
        ("api.proto", "code:protobuf"),
        ("main.tf", "code:terraform"),
        ("photo.jpg", None),
        ("archive.tar.gz", None),
        ("install.exe", None),
        ("noextension", None),
    ],
)
def test_classify(path, kind):
    assert classify(path) == kind


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_x.py", True),
        ("pkg/sub/test/helpers.go", True),
        ("web/__tests__/a.js", True),
        ("data/fixtures/sample.json", True),
        ("spec/models/user_spec.rb", True),
        ("test_core.py", True),
        ("core_test.py", True),
        ("server_test.go", True),
        ("src/App.test.tsx", True),
        ("src/api.spec.ts", True),
        ("src/main/java/FooTest.java", True),
        ("conftest.py", True),
        ("app/search/fusion.py", False),
        ("docs/testing.md", False),
        ("latest.py", False),
        ("contest.py", False),
    ],
)
def test_is_test_path(path, expected):
    assert is_test_path(path) is expected


def test_read_source_file_reads_inside_the_root_only(tmp_path):
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.md").write_text("inside\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    os.symlink(tmp_path / "secret.txt", root / "link.md")
    os.mkfifo(root / "pipe.md")
    assert confine.read_source_file(str(root), "sub/a.md", 3) == b"ins"
    for rel in ("link.md", "../secret.txt", "sub/../../secret.txt", "/etc/passwd", "pipe.md"):
        with pytest.raises(OSError) as caught:
            confine.read_source_file(str(root), rel, 100)
        assert caught.value.strerror, rel  # something to tell the user
    with pytest.raises(OSError):
        confine.read_source_file("", "sub/a.md", 100)
