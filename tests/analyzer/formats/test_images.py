"""The image placeholder every agent uses: the type and size of a picture, never its base64 bytes."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from aitrail.analyzer.formats.text import base64_size, image_placeholder, is_image_block

PNG = base64.b64encode(b"\x89PNG" + b"\0" * 996).decode()


def test_each_shape_the_agents_write_gives_type_and_decoded_size():
    shapes = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},  # Anthropic
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},  # OpenAI chat
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},  # Responses (Codex)
        {"type": "image", "data": PNG, "mimeType": "image/png"},  # Pi
        {"type": "imageUrl", "imageUrl": {"url": f"data:image/png;base64,{PNG}"}},  # Continue
        {"type": "image", "data": PNG, "mediaType": "image/png"},  # Cline SDK
        {"inlineData": {"mimeType": "image/png", "data": PNG}},  # Gemini part
    ]
    for block in shapes:
        assert is_image_block(block), block
        assert image_placeholder(block) == "[image image/png, 1000 bytes]", block


def test_a_remote_picture_keeps_its_address_and_an_empty_block_says_only_image():
    assert image_placeholder({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}) == \
        "[image https://example.com/a.png]"
    assert image_placeholder({"type": "image"}) == "[image]"
    assert not is_image_block({"type": "text", "text": "image"})
    assert not is_image_block({"inlineData": {"mimeType": "application/pdf", "data": "AAAA"}})


@given(st.binary(max_size=300), st.sampled_from(["", "\n", "\r\n"]))
def test_base64_size_is_the_decoded_length(data: bytes, newline: str):
    text = base64.encodebytes(data).decode().replace("\n", newline) if newline else base64.b64encode(data).decode()
    assert base64_size(text) == len(data)


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=400),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["type", "source", "data", "url", "image_url", "imageUrl", "inlineData",
                                         "mimeType", "media_type"]), inner, max_size=4), max_leaves=12))
def test_never_raises_and_never_longer_than_a_line(block):
    text = image_placeholder(block)
    assert text.startswith("[image") and len(text) < 300
