"""Plain-Python reference implementations the vectorised code is tested against.

They follow the documented definitions one string at a time, with Python ints
and sets, so that they are obviously right rather than fast.
"""

from __future__ import annotations

MASK = (1 << 64) - 1
MULTIPLIER = 0x9E3779B97F4A7C15
LENGTH_MIX = 0xD6E8FEB86659FD93
KIND_CODES = {"char": 1, "word": 2, "stopword": 3}
MERSENNE_61 = (1 << 61) - 1


def splitmix64(value: int) -> int:
    z = value & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def tag(kind: str, k: int, salt: int = 0) -> int:
    return splitmix64((KIND_CODES[kind] << 32 | k) ^ (salt & MASK))


def word_hash(word: str) -> int:
    value = 0
    for power, char in enumerate(word):
        value = (value + ord(char) * pow(MULTIPLIER, power, 1 << 64)) & MASK
    return splitmix64(value ^ ((len(word) * LENGTH_MIX) & MASK))


def char_shingles(text: str, k: int, salt: int = 0) -> list[int]:
    """Hashes of every window of k characters, in text order."""
    out = []
    for start in range(len(text) - k + 1):
        value = 0
        for char in text[start : start + k]:
            value = (value * MULTIPLIER + ord(char)) & MASK
        out.append(splitmix64(value ^ tag("char", k, salt)))
    return out


def word_shingles(
    text: str, k: int, stopwords: set[str] | None = None, salt: int = 0
) -> list[int]:
    """Hashes of every run of k words (first word a stop word, if given)."""
    words = text.split()
    kind = "word" if stopwords is None else "stopword"
    hashes = [word_hash(word) for word in words]
    out = []
    for start in range(len(words) - k + 1):
        if stopwords is not None and words[start] not in stopwords:
            continue
        value = 0
        for item in hashes[start : start + k]:
            value = (value * MULTIPLIER + item) & MASK
        out.append(splitmix64(value ^ tag(kind, k, salt)))
    return out


def minhash_affine32(tokens: list[int], a: list[int], b: list[int]) -> list[int]:
    folded = [token >> 32 for token in tokens]
    return [
        min((ai * x + bi) % (1 << 32) for x in folded)
        for ai, bi in zip(a, b, strict=True)
    ]


def minhash_mersenne61(tokens: list[int], a: list[int], b: list[int]) -> list[int]:
    reduced = [token % MERSENNE_61 for token in tokens]
    return [
        min((ai * x + bi) % MERSENNE_61 for x in reduced)
        for ai, bi in zip(a, b, strict=True)
    ]


def fss32(tokens: list[int], a: list[int], b: list[int]) -> list[int]:
    """Fast similarity sketching, one throw at a time (``a``, ``b``: 2t values).

    Round i < t throws every token x into slot ``((h >> 16) * t) >> 16`` of
    h = a_i x + b_i mod 2**32, with the value (i above the low bits of h); a
    slot keeps its least value; the rounds stop once every slot holds one. A
    slot j still empty then gets min over x of a_{t+j} x + b_{t+j} mod 2**32.
    """
    slots = len(a) // 2
    round_bits = (slots - 1).bit_length()
    low = (1 << (32 - round_bits)) - 1
    empty = (1 << 32) - 1
    folded = [token >> 32 for token in tokens]
    sketch = [empty] * slots
    for round_ in range(slots):
        for x in folded:
            h = (a[round_] * x + b[round_]) % (1 << 32)
            slot = ((h >> 16) * slots) >> 16
            value = min((round_ << (32 - round_bits)) | (h & low), empty - 1)
            sketch[slot] = min(sketch[slot], value)
        if empty not in sketch:
            break
    for slot in range(slots):
        if sketch[slot] == empty:
            ai, bi = a[slots + slot], b[slots + slot]
            sketch[slot] = min((ai * x + bi) % (1 << 32) for x in folded)
    return sketch


def jaccard(left: set[int], right: set[int]) -> float:
    union = left | right
    return len(left & right) / len(union) if union else float("nan")
