"""mfma's rows of subnormals and specials (a helper of probes/mfma.py, not a
step of its own): a subnormal C, input and result, a C far below a subnormal
product, NaN in A, B and C, Inf x 1, Inf x 0, Inf - Inf, a product past f32."""

from __future__ import annotations

from tcprobe.models.formats import Specials
from tcprobe.models.words import exp_range, pow2, product, word


def special_rows(bt, plan) -> dict:
    fa, fb, fd = plan.fa, plan.fb, plan.fd
    one_a, one_b = pow2(fa, 0), pow2(fb, 0)
    sub_a = word(fa, 0, 1, exp_range(fa)[0])
    rows = {}
    rows["subnormal C alone"] = bt.add("subnormal C alone", {}, word(fd, 0, 1, exp_range(fd)[0]))
    if sub_a is not None:
        rows["subnormal A x 1"] = bt.add("smallest subnormal A x 1, C = 0", {0: (sub_a, one_b)})
    # a C far below a subnormal product: grouped drops it, truncated floors it to
    # one unit 2**(e - F) of the product's raw exponent e, above its value
    tiny_c, sub_b = word(fd, 1, 1, exp_range(fd)[0]), word(fb, 0, 1, exp_range(fb)[0])
    for label, pair in (("subnormal A x subnormal B", (sub_a, sub_b)),
                        ("subnormal A x 1", (sub_a, one_b))):
        if None not in pair and tiny_c is not None:
            rows[f"{label}, C = -smallest subnormal"] = bt.add(
                f"{label}, C = -smallest subnormal", {0: pair}, tiny_c)
    low = product(fa, fb, exp_range(fd)[1] - 2)
    if low:
        rows["subnormal result"] = bt.add("a product below D's smallest normal", {0: low[:2]})
    nan_a, nan_b = nan_word(fa, 1), nan_word(fb, 2)
    if nan_a is not None:
        rows["NaN in A"] = bt.add("NaN in A (payload 1), B = 1", {0: (nan_a, one_b)})
        rows["NaN in A and B"] = bt.add("NaN A (1) x NaN B (2)", {plan.k - 1: (nan_a, nan_b or one_b)})
    nan_c = nan_word(fd, 3)
    if nan_c is not None:
        rows["NaN in C"] = bt.add("NaN C (payload 3), A x B = 1", {0: (one_a, one_b)}, nan_c)
    inf_a, inf_c = inf_word(fa, 0), inf_word(fd, 1)
    if inf_a is not None:
        rows["Inf x 1"] = bt.add("Inf x 1, C = 1", {0: (inf_a, one_b)}, pow2(fd, 0))
        rows["Inf x 0"] = bt.add("Inf x 0", {0: (inf_a, 0)})
        rows["Inf x 1 + -Inf"] = bt.add("Inf x 1, C = -Inf", {0: (inf_a, one_b)}, inf_c)
    if inf_c is not None:
        rows["-Inf C"] = bt.add("C = -Inf, A x B = 1", {0: (one_a, one_b)}, inf_c)
    big = product(fa, fb, plan.p_hi, 0, (3, 1), (1, 0))
    if big and plan.p_hi >= 127:
        rows["product past f32"] = bt.add("a product of 1.5 * 2^{plan.p_hi}", {0: big[:2]})
    return rows


def nan_word(fmt, payload: int) -> int | None:
    """A NaN word with ``payload`` in its low bits (None: the format has no payloads)."""
    if fmt.specials != Specials.IEEE:
        return 1 << (fmt.width - 1) if fmt.specials == Specials.FNUZ else None  # fnuz: 0x80
    return ((1 << fmt.exp_bits) - 1) << fmt.frac_bits | (payload & ((1 << fmt.frac_bits) - 1))


def inf_word(fmt, sign: int) -> int | None:
    if fmt.specials != Specials.IEEE:
        return None
    return (sign << (fmt.width - 1)) | ((1 << fmt.exp_bits) - 1) << fmt.frac_bits
