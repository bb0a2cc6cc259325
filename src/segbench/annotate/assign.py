"""The 2001 assignment rules as pure functions of the ledger's state.

Martin et al. (ICCV 2001, "Images, tool and instructions"): images were assigned at random,
biased toward images someone else had already segmented, under three constraints: no
subject saw an image twice, no image was segmented by more than five people, and no two
images had exactly the same set of subjects. Half of the segmentations were made on the
grayscale image.

An image's *set* here is every subject holding an assignment of it, open or finished: an
open assignment is a reservation, so the constraints hold whenever the collection stops.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Mapping

#: Default weight of an image with k subjects is ``1 + BIAS * k`` (k = 0: a fresh image).
BIAS = 4.0


def candidates(
    subject: int,
    sets: Mapping[str, frozenset],
    per_image: int,
    *,
    exclude: Collection[str] = (),
) -> list[str]:
    """Images ``subject`` may be given now, in sorted order.

    Parameters
    ----------
    subject : int
        The asking subject's id.
    sets : mapping of image id to frozenset of subject ids
        Every image of the collection with the subjects assigned to it (empty for none).
    per_image : int
        The most subjects an image may have.
    exclude : collection of str, optional
        Images the subject may not be given for another reason: seen before and given
        up (skipped, or a reservation that expired), or not served now (a photograph
        that cannot be decoded). They still count for the third rule.

    Returns
    -------
    list of str
        The images the subject has not seen, with fewer than ``per_image`` subjects,
        whose set plus ``subject`` equals no other image's nonempty set.

    Notes
    -----
    Keeping every nonempty set distinct at *every* step (not only at the end) is what lets
    the collection stop at any moment with the third rule true. Its price: a subject who
    is alone on one image cannot start a second fresh one until someone joins the first.
    """
    taken = Counter(s for s in sets.values() if s)
    out = []
    for iid in sorted(sets):
        s = sets[iid]
        if subject in s or len(s) >= per_image or iid in exclude:
            continue
        if taken[s | {subject}]:  # another image already has exactly this set
            continue
        out.append(iid)
    return out


def choose(
    subject: int,
    sets: Mapping[str, frozenset],
    per_image: int,
    rng: random.Random,
    *,
    bias: float = BIAS,
    exclude: Collection[str] = (),
) -> str | None:
    """Pick the next image for ``subject``: random among :func:`candidates` (``exclude``
    as there), weighted ``1 + bias * k`` for an image with k subjects; None when none
    is allowed."""
    cands = candidates(subject, sets, per_image, exclude=exclude)
    if not cands:
        return None
    weights = [1.0 + bias * len(sets[i]) for i in cands]
    return rng.choices(cands, weights=weights, k=1)[0]


def choose_gray(
    image_counts: tuple[int, int], total_counts: tuple[int, int], rng: random.Random
) -> bool:
    """Whether the next segmentation of an image is made on the grayscale image.

    Parameters
    ----------
    image_counts, total_counts : (n_color, n_gray)
        Assignments of this image, and of the whole collection, by presentation.

    Returns
    -------
    bool
        The presentation the image has fewer of; on a tie, the one the collection has
        fewer of; on a tie again, a coin toss. Each image thus stays within one of half
        grey, and so does the collection up to the number of images left odd.
    """
    (ic, ig), (tc, tg) = image_counts, total_counts
    if ic != ig:
        return ig < ic
    if tc != tg:
        return tg < tc
    return rng.random() < 0.5
