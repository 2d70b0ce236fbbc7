#!/usr/bin/python3
"""Agreement of two outputs of samples/ocr_pipeline's format (the sample's, and the float
pipeline's of tests/accuracy/ocr_pipeline_reference), page by page, and of each with the
rendered pages' ground truth (labels.json of the det evaluation set).

A line of one output matches a line of the other when their boxes' axis-aligned bounding boxes
overlap with IoU >= 0.5 (each line matched at most once, best IoU first); two matched lines
agree when their texts are equal. Against the ground truth, the text is compared with its
spaces removed (PP-OCR's recogniser often drops the space between words; the figure is about
the characters). Prints the figures (also the agreement with spaces removed); exits 1 when
fewer than --min-text-agree P % of the reference's lines have a matching line of the same text,
or when the candidate reads more than --max-truth-loss D points (of the ground truth's lines)
fewer lines right than the reference.

  ocr_agreement.py CANDIDATE.txt REFERENCE.txt [--labels labels.json] [--min-text-agree P]
      [--max-truth-loss D] [--names candidate,reference]
"""
import argparse
import json
import os
import re
import sys

LINE = re.compile(r"^box (\d+): (-?\d+),(-?\d+) (-?\d+),(-?\d+) (-?\d+),(-?\d+) (-?\d+),(-?\d+) "
                  r"angle (0|180) score (\S+) text (.*)$")
IMAGE = re.compile(r"^image (\S+): (\d+)x(\d+), (\d+) lines$")


def parse(path):
    """{page id: [(x0, y0, x1, y1, text, angle)]} of an output file."""
    pages, current = {}, None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = IMAGE.match(line)
            if m:
                current = os.path.splitext(os.path.basename(m.group(1)))[0]
                pages[current] = []
                continue
            m = LINE.match(line)
            if not m or current is None:
                sys.exit("ocr_agreement: %s: not the sample's format: %r" % (path, line))
            xs = [int(m.group(i)) for i in (2, 4, 6, 8)]
            ys = [int(m.group(i)) for i in (3, 5, 7, 9)]
            pages[current].append((min(xs), min(ys), max(xs), max(ys), m.group(12), int(m.group(10))))
    return pages


def iou(a, b):
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def match(candidate, reference):
    """Pairs (candidate index, reference index), best IoU first, IoU >= 0.5."""
    pairs = sorted(((iou(c, r), i, j) for i, c in enumerate(candidate) for j, r in enumerate(reference)),
                   reverse=True)
    used_c, used_r, out = set(), set(), []
    for v, i, j in pairs:
        if v < 0.5:
            break
        if i not in used_c and j not in used_r:
            used_c.add(i), used_r.add(j), out.append((i, j))
    return out


def ground_truth_equal(lines, truth):
    """Lines of `truth` (labels' lines) with a matching output line of the same text (spaces
    removed)."""
    gt = [tuple(t["box"]) + (t["text"],) for t in truth]
    return sum(1 for i, j in match(lines, gt) if lines[i][4].replace(" ", "") == gt[j][4].replace(" ", ""))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("candidate")
    p.add_argument("reference")
    p.add_argument("--labels")
    p.add_argument("--min-text-agree", type=float)
    p.add_argument("--max-truth-loss", type=float)
    p.add_argument("--names", default="sample,float")
    a = p.parse_args()
    names = a.names.split(",")
    cand, ref = parse(a.candidate), parse(a.reference)
    truth = {}
    if a.labels:
        with open(a.labels, encoding="utf-8") as f:
            truth = {s["id"]: s["lines"] for s in json.load(f)["samples"]}
    totals = dict(ref_lines=0, cand_lines=0, matched=0, equal=0, equal_unspaced=0, pages_equal=0, gt_lines=0,
                  gt_ref=0, gt_cand=0)
    for page in sorted(ref):
        if page not in cand:
            sys.exit("ocr_agreement: page %s is not in %s" % (page, a.candidate))
        c, r = cand[page], ref[page]
        pairs = match(c, r)
        equal = sum(1 for i, j in pairs if c[i][4] == r[j][4])
        totals["equal_unspaced"] += sum(1 for i, j in pairs if c[i][4].replace(" ", "") == r[j][4].replace(" ", ""))
        same_page = len(c) == len(r) and equal == len(r)
        differ = ["%r vs %r" % (c[i][4], r[j][4]) for i, j in pairs if c[i][4] != r[j][4]]
        line = "page %s: %s %d lines, %s %d, matched %d, same text %d%s" % (
            page, names[1], len(r), names[0], len(c), len(pairs), equal,
            ("; differ: " + "; ".join(differ)) if differ else "")
        if page in truth:
            g_r, g_c = ground_truth_equal(r, truth[page]), ground_truth_equal(c, truth[page])
            line += "; ground truth %d lines, equal: %s %d, %s %d" % (len(truth[page]), names[1], g_r, names[0], g_c)
            totals["gt_lines"] += len(truth[page])
            totals["gt_ref"] += g_r
            totals["gt_cand"] += g_c
        print(line)
        totals["ref_lines"] += len(r)
        totals["cand_lines"] += len(c)
        totals["matched"] += len(pairs)
        totals["equal"] += equal
        totals["pages_equal"] += same_page
    agree = 100.0 * totals["equal"] / max(1, totals["ref_lines"])
    print("%d pages, %d identical; %s %d lines, %s %d, matched %d, same text %d (%.1f%% of %s's lines), "
          "%d with spaces removed (%.1f%%)" % (
              len(ref), totals["pages_equal"], names[1], totals["ref_lines"], names[0], totals["cand_lines"],
              totals["matched"], totals["equal"], agree, names[1], totals["equal_unspaced"],
              100.0 * totals["equal_unspaced"] / max(1, totals["ref_lines"])))
    ok = True
    if a.min_text_agree is not None and agree < a.min_text_agree:
        print("FAIL: %.1f%% of the lines agree, under the bar of %.1f%%" % (agree, a.min_text_agree))
        ok = False
    if truth:
        n = max(1, totals["gt_lines"])
        loss = 100.0 * (totals["gt_ref"] - totals["gt_cand"]) / n
        print("ground truth: %d lines; equal text (spaces removed): %s %d (%.1f%%), %s %d (%.1f%%)" % (
            totals["gt_lines"], names[1], totals["gt_ref"], 100.0 * totals["gt_ref"] / n, names[0],
            totals["gt_cand"], 100.0 * totals["gt_cand"] / n))
        if a.max_truth_loss is not None and loss > a.max_truth_loss:
            print("FAIL: %s reads %.1f points fewer ground-truth lines than %s, over the bar of %.1f" % (
                names[0], loss, names[1], a.max_truth_loss))
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
