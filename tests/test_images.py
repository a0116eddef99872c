"""casebook.images: sniffing, safe opening, numeric order, perceptual hashes (real anchor images)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from casebook.images import (
    ImageTooLarge,
    UnsupportedImage,
    hamming,
    numeric_sort_key,
    open_image_safely,
    perceptual_hash,
    sniff_image,
)


def encode(img: Image.Image, fmt: str, **kwargs) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kwargs)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("fmt", "media_type", "ext"),
    [("PNG", "image/png", ".png"), ("JPEG", "image/jpeg", ".jpg"), ("GIF", "image/gif", ".gif"),
     ("WEBP", "image/webp", ".webp"), ("TIFF", "image/tiff", ".tiff"), ("BMP", "image/bmp", ".bmp")],
)
def test_sniff_every_supported_format(fmt: str, media_type: str, ext: str):
    data = encode(Image.new("RGB", (8, 8), "red"), fmt)
    assert sniff_image(data) == (media_type, ext)


@pytest.mark.parametrize("data", [b"", b"%PDF-1.7\n", b"BMxx this is text not a bitmap....", "你好".encode()])
def test_sniff_refuses_non_images_with_a_clear_message(data: bytes):
    with pytest.raises(UnsupportedImage, match="not a supported image|empty file"):
        sniff_image(data)


def test_sniff_sees_through_lying_extensions(whodunitbench_anchor: Path):
    # Pu's image_N.png files are really JPEG; XIAOHUA's N.png are real PNG (whodunitbench.md §4)
    assert sniff_image((whodunitbench_anchor / "Pu/img/image_1.png").read_bytes())[0] == "image/jpeg"
    assert sniff_image((whodunitbench_anchor / "XIAOHUA_example/img/1.png").read_bytes())[0] == "image/png"


def test_open_image_safely_refuses_images_above_the_pixel_limit():
    # a 5000x5000 1-bit PNG is a few kB on disk and 25 Mpx once decoded
    bomb = encode(Image.new("1", (5000, 5000)), "PNG")
    assert len(bomb) < 50_000
    with pytest.raises(ImageTooLarge, match=r"5000x5000 = 25,000,000 pixels, above the limit of 1,000,000"):
        open_image_safely(bomb, max_pixels=1_000_000)
    assert open_image_safely(bomb, max_pixels=30_000_000).size == (5000, 5000)


def test_open_image_safely_turns_pillows_bomb_guard_into_a_clear_error(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10)  # Pillow refuses > 2x this on its own
    with pytest.raises(ImageTooLarge, match="decompression bomb"):
        open_image_safely(encode(Image.new("RGB", (40, 40)), "PNG"), max_pixels=10**9)


@pytest.mark.parametrize("reduce", [False, True])
def test_open_image_safely_reports_truncated_files(reduce: bool, whodunitbench_anchor: Path):
    data = (whodunitbench_anchor / "DI7MI_2/img/1.jpg").read_bytes()
    full = open_image_safely(data).size
    # reduce=True decodes at 1/8 scale (JPEG draft mode) but still reads every byte
    assert open_image_safely(data, reduce=reduce).size == ((full[0] + 7) // 8, (full[1] + 7) // 8) if reduce else full
    with pytest.raises(UnsupportedImage, match="truncated or corrupt"):
        open_image_safely(data[: len(data) // 2], reduce=reduce)


def test_open_image_safely_reads_paths_and_reports_missing_files(tmp_path: Path):
    path = tmp_path / "卡片.png"
    path.write_bytes(encode(Image.new("RGB", (3, 2)), "PNG"))
    assert open_image_safely(path).size == (3, 2)
    with pytest.raises(UnsupportedImage, match="cannot read"):
        open_image_safely(tmp_path / "missing.png")


def test_numeric_sort_key_orders_numbers_as_people_do(whodunitbench_anchor: Path):
    names = ["image_10.png", "image_2.png", "image_1(1).png", "image_1.png", "image14.png", "image_2(1).png"]
    assert sorted(names, key=numeric_sort_key) == [
        "image14.png", "image_1.png", "image_1(1).png", "image_2.png", "image_2(1).png", "image_10.png"]
    real = sorted((p.name for p in (whodunitbench_anchor / "XIAOHUA_example/img").iterdir()), key=numeric_sort_key)
    assert real == [f"{n}.png" for n in range(1, 12)]
    assert sorted(["b/2.png", "a/10.png", "a/9.png"], key=numeric_sort_key) == ["a/9.png", "a/10.png", "b/2.png"]


def test_perceptual_hash_matches_reencoded_copies_and_separates_different_cards(whodunitbench_anchor: Path):
    images = [open_image_safely(p) for p in sorted((whodunitbench_anchor / "Pu/img").iterdir(), key=numeric_sort_key)]
    hashes = [perceptual_hash(img) for img in images]
    assert all(0 <= h < 2**64 for h in hashes)
    # the same card re-encoded (JPEG quality 40) and shrunk to half size stays within a few bits
    copy = open_image_safely(encode(images[0].convert("RGB").resize((images[0].width // 2, images[0].height // 2)),
                                    "JPEG", quality=40))
    assert hamming(hashes[0], perceptual_hash(copy)) <= 6
    # the nine distinct published cards are far apart
    distances = [hamming(a, b) for i, a in enumerate(hashes) for b in hashes[i + 1:]]
    assert min(distances) > 10
    assert hamming(hashes[0], hashes[0]) == 0
