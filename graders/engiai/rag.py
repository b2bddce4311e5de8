"""SCORING (a part of grade_engiai.py; see CONTRIBUTING.md)."""
import math
import re
import unicodedata
from graders.common.records import Check, Status
from graders.engiai.families import Unscorable, weighted
from graders.engiai.guarded import as_number, short
from graders.engiai.spec import PROBLEMS, SPEC
# -- end of source-tree preamble: the build keeps only what follows --
# =============================================================================
# SCORING: RAG retrieval (accuracy credited only when the RAG tool was called)
# =============================================================================
_RAG_ALIASES = {"volfrac": ("volfrac", "volume_fraction", "vol_frac", "volume"),
                "forcedist": ("forcedist", "force_distribution", "force_dist", "forcedistribution"),
                "rmin": ("rmin", "filter_radius", "r_min")}


def rag_param(calls: list, param: str) -> tuple:
    """(value, call index): the first value of a parameter in optimize_design args (flat, then
    problem_config), the agent's answer for it; (None, None) when no call carries one."""
    for i, c in enumerate(calls):
        if c["name"] != "optimize_design":
            continue
        for scope in (c["args"], c["args"].get("problem_config")):
            if not isinstance(scope, dict):
                continue
            for alias in _RAG_ALIASES[param]:
                v = as_number(scope.get(alias))
                if v is not None:
                    return v, i
    return None, None


# numbers as people write them (issue 24: "35 percent" was not read as 0.35): digits, decimals
# and exponents; a percentage (`35%`, `35 percent`, `35 per cent`, `35 pct`) reads as 0.35 as well
# as 35; a fraction `7/20` as 0.35; number words up to 999 ("thirty-five percent", "zero point
# three five", "one half", "a third", "three quarters")
# A percent sign after a range or a tolerance applies to both numbers ("30-40%", "30 to 40
# percent", "35 ± 5 %"), and a hyphen may join it ("a 35-percent volume fraction"); the
# full-width sign of CJK text is a percent sign too (second attack pass of issue 24)
_UNSIGNED = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_PASSAGE_NUMBER = re.compile(
    r"(?<![\w.])([-+]?" + _UNSIGNED + r")"
    r"(?:\s*/\s*(\d+(?:\.\d*)?|\.\d+)(?![\w.]))?"
    r"(?:\s*(?:-|\u2013|\u2014|to|\u00b1|\+/-|\+-)\s*(" + _UNSIGNED + r"))?"
    r"(\s*(?:-\s*)?(?:%|\uff05|(?:percent|per[\s-]*cent|pct)(?![A-Za-z])))?", re.IGNORECASE)
_UNIT_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
_TENS_WORDS = {w: 10 * (i + 2) for i, w in enumerate(
    "twenty thirty forty fifty sixty seventy eighty ninety".split())}
_FRACTION_WORDS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4,
                   "fourth": 4, "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6,
                   "seventh": 7, "sevenths": 7, "eighth": 8, "eighths": 8, "ninth": 9,
                   "ninths": 9, "tenth": 10, "tenths": 10, "twentieth": 20, "twentieths": 20,
                   "hundredth": 100, "hundredths": 100, "thousandth": 1000, "thousandths": 1000}


def _cardinal(words: list, i: int) -> tuple:
    """(value, next index) of the number words starting at words[i] (0..999), or (None, i)."""
    def below_100(k):
        if k < len(words) and words[k] in _TENS_WORDS:
            v = _TENS_WORDS[words[k]]
            if k + 1 < len(words) and words[k + 1] in _UNIT_WORDS and 0 < _UNIT_WORDS[words[k + 1]] < 10:
                return v + _UNIT_WORDS[words[k + 1]], k + 2
            return v, k + 1
        if k < len(words) and words[k] in _UNIT_WORDS:
            return _UNIT_WORDS[words[k]], k + 1
        return None, k
    v, k = below_100(i)
    if v is None:
        return None, i
    if k < len(words) and words[k] == "hundred" and 0 < v < 10:
        v, k = v * 100, k + 1
        nxt = k + 1 if k < len(words) and words[k] == "and" else k
        rest, k2 = below_100(nxt)
        if rest is not None:
            v, k = v + rest, k2
    return v, k


def word_numbers(text: str) -> list:
    """Values written in words: cardinals, `point` decimals, fractions, percentages."""
    words = re.findall(r"[a-z]+", text.lower())
    out, i = [], 0
    while i < len(words):
        v, k = _cardinal(words, i)
        if v is None and words[i] == "point" and i + 1 < len(words) and \
                words[i + 1] in _UNIT_WORDS and _UNIT_WORDS[words[i + 1]] < 10:
            v, k = 0, i         # "point three five": the zero left unsaid
        if v is None:
            if words[i] == "a" and i + 1 < len(words) and words[i + 1] in _FRACTION_WORDS:
                out.append(1.0 / _FRACTION_WORDS[words[i + 1]])
                i += 2
            else:
                i += 1
            continue
        value = float(v)
        if k < len(words) and words[k] == "point":
            digits = []
            while k + 1 < len(words) and words[k + 1] in _UNIT_WORDS and _UNIT_WORDS[words[k + 1]] < 10:
                digits.append(str(_UNIT_WORDS[words[k + 1]]))
                k += 1
            if digits:
                value = float(f"{v}.{''.join(digits)}")
                k += 1
        if k < len(words) and words[k] in _FRACTION_WORDS:
            out.append(value / _FRACTION_WORDS[words[k]])
            k += 1
        elif k < len(words) and (words[k] in ("percent", "pct") or
                                 (words[k] == "per" and k + 1 < len(words) and words[k + 1] == "cent")):
            out += [value, value / 100.0]
            k += 2 if words[k] == "per" else 1
        else:
            out.append(value)
        i = k
    return out


_NUMBER_FORMS = {**{0xff01 + i: 0x21 + i for i in range(0x5e)},          # full-width ASCII
                 **{0x1d7ce + i: 0x30 + i % 10 for i in range(50)},     # mathematical digits
                 0x3000: 0x20}                                          # ideographic space


def passage_numbers(text: str) -> list:
    """Every value a passage states (digits, percentages, fractions, number words), its
    full-width characters and mathematical digits read as ASCII (red team round 5: full-width
    "０．３５" read as 0 and 35; a one-to-one table, not NFKC, which turns one character into
    up to 18 and took 1.6 s on a 2^20-character passage)."""
    if not text.isascii():
        text = text.translate(_NUMBER_FORMS)
    out = []
    for m in _PASSAGE_NUMBER.finditer(text):
        try:
            x = float(m.group(1))
            if m.group(2) is not None:
                d = float(m.group(2))
                out += [x, d] + ([x / d] if d != 0 else [])
                continue
        except (ValueError, OverflowError):
            continue
        for v in (x,) + ((float(m.group(3)),) if m.group(3) is not None else ()):
            out += [v, v / 100.0] if m.group(4) else [v]
    return out + word_numbers(text)


def passage_text(p):
    """The text of one returned passage (a string, or an object's `content` or `text`)."""
    return p if isinstance(p, str) else (p.get("content") or p.get("text")) \
        if isinstance(p, dict) else None


_NOT_ALNUM = re.compile(r"[\W_]+")
# letters of other scripts drawn like Latin ones (casefolded), read as those: a copy's passage
# with its letters swapped for look-alikes reads as the passage it copies (issue 24, red team;
# round 5 added Latin small capitals and IPA letters, Armenian, Cherokee and Lisu ones: "օ"
# and "ɑ" for o and a left 6 of 40 pieces, another trial, SCORE 0.8111 -> 0.8528)
_LOOK_ALIKES = str.maketrans(
    "аеорсухіјѕһӏԁԛԝвкмнтαοινκρτυχβεημζϲı"
    "ɑɡɩɪʏᴀʙᴄᴅᴇɢʜᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡᴢ" "օսհոցզա"
    "ᎪᏴᏟᎬᎻᎫᏦᏞᎷᏢᏚᎢᎳᏃᎠᏀᏙ" "ꓮꓐꓚꓓꓰꓝꓖꓧꓲꓙꓗꓡꓟꓠꓳꓑꓣꓢꓔꓴꓦꓪꓫꓬꓜ",
    "aeopcyxijshldqwbkmhtaoivkptuxbehmzci"
    "agiiyabcdeghjklmnoprstuvwz" "ouhngqw"
    "abcehjklmpstwzdgv" "abcdefghijklmnoprstuvwxyz",
    # letters drawn as nothing (Hangul fillers): dropped like the invisible format characters
    "\u115f\u1160\u3164\uffa0")


def _copy_text(t: str) -> str:
    """A passage's text as the duplicate check reads it: compatibility-decomposed (NFKD) with
    its combining marks, invisible format characters and blank letters dropped, casefolded,
    look-alike letters read as Latin, and every character other than letters and digits
    dropped (red team round 5: a '.', a space or a blank Braille cell inside every word cut
    every piece; joined, "vol.ume" reads as "volume")."""
    if t.isascii():
        return _NOT_ALNUM.sub("", t.lower())
    # NFKD turns one character into up to 18 (U+FDFA): its result is cut to 2^21 characters
    # (room for every accent of a 2^20-character text) before the per-character walk (round 5:
    # a passage of 2^20 such characters took 8.8 s uncut)
    t = "".join(ch for ch in unicodedata.normalize("NFKD", t)[:1 << 21]
                if unicodedata.category(ch) not in ("Mn", "Me", "Cf"))
    return _NOT_ALNUM.sub("", t.casefold().translate(_LOOK_ALIKES))


def passage_shingles(texts):
    """The distinct `rag_copy_shingle`-character pieces of passages' texts, as a sorted uint64
    array of their hashes, for the duplicate check (issue 24, red team round 4): each text
    (its first 2^20 characters, as passage_numbers reads it) read by _copy_text, so that
    whitespace, punctuation, case, accents, invisible characters and look-alike letters change
    nothing; pieces are taken per passage (the passages' order and repeats change nothing) and
    of the passages joined in their order (a passage cut into many short ones reads whole); a
    text shorter than a piece is one piece."""
    import numpy as np
    k = SPEC["rag_copy_shingle"]
    out = [np.zeros(0, dtype=np.uint64)]
    texts = list(texts)
    if len(texts) > 1:              # and of their text joined in order: a passage cut into
        texts.append(" ".join(t[:1 << 20] for t in texts))   # pieces shorter than one reads whole
    for t in texts:
        t = _copy_text(t[:1 << 20])
        if not t:
            continue
        c = np.frombuffer(t.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        width = min(k, c.size)
        n = c.size - width + 1
        h = np.full(n, width, dtype=np.uint64)
        for j in range(width):          # polynomial hash mod 2^64 (wraps); a collision only
            h = h * np.uint64(0x100000001B3) + c[j:j + n] + np.uint64(1)   # adds a match
        out.append(h)
    return np.unique(np.concatenate(out))


def shingle_containment(a, b) -> tuple:
    """(share, shared): of the smaller set of pieces (passage_shingles), how many lie in the
    other's, and that share; (0.0, 0) when either is empty."""
    import numpy as np
    if not a.size or not b.size:
        return 0.0, 0
    shared = int(np.intersect1d(a, b, assume_unique=True).size)
    return shared / min(a.size, b.size), shared


def passages_state(call: dict, value: float, tol: float) -> bool:
    """Does a successful retrieval's text state `value` (some number in its passages within
    tol of it, read as people write numbers: passage_numbers)?  A retrieval that carries no
    such number could not have informed that answer (TRIAL_FORMAT.md decision 10)."""
    for p in call["result"].get("results") or ():
        text = passage_text(p)
        if not isinstance(text, str):
            continue
        if any(math.isfinite(v) and abs(v - value) <= tol for v in passage_numbers(text[:1 << 20])):
            return True
    return False


def retrieval_failure(call: dict):
    """None when a search_documents call is a successful retrieval, else why not.  Successful
    (TRIAL_FORMAT.md): result.success is exactly JSON true, result.error is absent, null, false
    or "", and result.results is a non-empty list of passages, each a non-empty string or an
    object whose `content` or `text` is a non-empty string."""
    res = call["result"]
    if res.get("success") is not True:
        return f"success is {short(res.get('success'), as_repr=True)}, not true"
    if res.get("error") not in (None, False, ""):
        return f"it reports an error ({short(res.get('error'), 60)!r})"
    passages = res.get("results")
    if not isinstance(passages, list) or not passages:
        return "it returned no passages (results missing or empty)"
    text = passage_text
    if not all(isinstance(text(p), str) and text(p).strip() for p in passages):
        return "a returned passage is empty or not text"
    return None


def score_rag(key: dict, calls: list, tid: str) -> tuple:
    """rag_accuracy: mode-weighted parameter accuracy plus the weight for using the RAG tool.
    `rag_tool_called` needs a successful retrieval (retrieval_failure); a parameter's accuracy
    counts only when a successful retrieval precedes the optimize_design call that gave the
    answer and states the answered value (passages_state): a failed or empty retrieval, one
    after the answer, or one whose passages carry no such number, is a lucky guess (seed:
    "a lucky guess scores nothing")."""
    cond = (key.get("expected") or {}).get("conditions") if isinstance(key.get("expected"), dict) else None
    if not isinstance(cond, dict) or as_number(cond.get("expected_volfrac")) is None:
        raise Unscorable("expected.conditions.expected_volfrac missing from the harness manifest")
    tested = tuple(p for p in ("forcedist", "rmin") if cond.get(f"expected_{p}") is not None)
    weights = SPEC["rag_modes"][tested]
    searches = [(i, retrieval_failure(c)) for i, c in enumerate(calls) if c["name"] == "search_documents"]
    good = [i for i, why in searches if why is None]
    terms, detail = {"rag_tool_called": 1.0 if good else 0.0}, []
    rag = weights["rag_tool_called"] * terms["rag_tool_called"]
    for p in ("volfrac",) + tested:
        exp = as_number(cond.get(f"expected_{p}"))
        if exp is None:
            raise Unscorable(f"expected.conditions.expected_{p} is not a number")
        tol = cond.get(f"expected_{p}_tolerance")
        tol = SPEC["rag_default_tol"] if tol is None else as_number(tol)
        if tol is None or tol < 0:
            raise Unscorable(f"expected.conditions.expected_{p}_tolerance in the harness manifest "
                             "is not a non-negative number")
        got, at = rag_param(calls, p)
        acc = 1.0 if got is not None and abs(got - exp) <= tol else 0.0
        before = [i for i in good if at is not None and i < at]
        informed = any(passages_state(calls[i], got, tol) for i in before)
        terms[f"{p}_accuracy"] = acc
        rag += weights[p] * acc * informed
        why = ("no successful retrieval before the answer" if not before else
               f"no retrieval before the answer states {got:g} (within {tol:g})")
        detail.append(f"{p} {got!r} vs {exp:g}+-{tol:g}: {'ok' if acc else 'off'}"
                      + ("" if informed or not acc else f" (not credited: {why})"))
    terms["rag_accuracy"] = rag
    terms["overall"] = weighted(PROBLEMS[key["problem"]]["weights"], terms)
    if not searches:
        head = "search_documents NOT called: parameter accuracy not credited; "
    else:
        bad = [f"call {i + 1}: {why}" for i, why in searches if why is not None]
        head = (f"{len(good)} successful retrieval(s) of {len(searches)} search_documents call(s)"
                + (f" ({'; '.join(bad[:3])})" if bad else "") + "; ")
    return terms, [Check(f"trial.{tid}.rag", Status.INFO, head + "; ".join(detail))]


