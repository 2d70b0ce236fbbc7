#!/usr/bin/python3
"""Speech-and-noise audio for the voice-activity models, made by script (espeak-ng, numpy).

    make_audio.py OUT.npy --seed N --seconds S

Writes a float32 16 kHz signal in [-1, 1]: utterances spoken by espeak-ng (voices, speeds and
pitches drawn from the seed) separated by pauses of 0.3-2 s, at random levels, over background
noise (white, brown or a hum, changing per segment) at 10-35 dB below the speech. Different
seeds give different sentences, voices and noise, so calibration and evaluation streams do not
share material.
"""
import argparse
import io
import subprocess
import sys
import wave

import numpy as np

RATE = 16000
SENTENCES = [
    "The model converts in a few seconds on this machine.",
    "Please leave the door open when you go out.",
    "Seven hundred and twelve boxes arrived this morning.",
    "Turn left at the second traffic light and keep going.",
    "The weather will be cold and windy tomorrow.",
    "Could you read the last number again, slowly?",
    "We measured the latency on three different boards.",
    "A small cat sat quietly in the warm sunlight.",
    "Send the report to everyone before Friday evening.",
    "The train to the airport leaves every twenty minutes.",
    "Nobody expected the concert to end so early.",
    "Write your name at the top of the first page.",
    "The river rose by two metres during the night.",
    "Heat the water until it starts to boil, then wait.",
    "Our team finished the project a week ahead of time.",
    "She bought apples, bread and a bottle of milk.",
    "The library closes at nine on weekdays.",
    "Check the cables before you switch the power on.",
    "Every evening the birds gather in the old oak tree.",
    "Thank you for calling, how can I help you today?",
]
VOICES = ["en-us", "en-gb", "en-us+f3", "en-gb+m3", "en-us+f2", "en-gb-scotland", "en-us+m7", "en-029", "en-gb-x-rp+f4"]


def speak(text, voice, speed, pitch):
    wav = subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout", text],
                         check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(wav)) as w:
        rate = w.getframerate()
        samples = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64) / 32768.0
    t = np.arange(int(len(samples) * RATE / rate)) / RATE
    return np.interp(t, np.arange(len(samples)) / rate, samples)


def noise(rng, n):
    kind = rng.integers(0, 3)
    if kind == 0:
        x = rng.normal(0, 1, n)
    elif kind == 1:  # brown: integrated white noise, high-passed by removing a moving mean
        x = np.cumsum(rng.normal(0, 1, n))
        x -= np.convolve(x, np.ones(401) / 401, mode="same")
    else:  # mains hum with harmonics and a little white noise
        t = np.arange(n) / RATE
        f = rng.choice([50.0, 60.0])
        x = sum(np.sin(2 * np.pi * f * k * t + rng.uniform(0, 6.3)) / k for k in (1, 2, 3)) + rng.normal(0, 0.2, n)
    return x / (np.sqrt(np.mean(x ** 2)) + 1e-12)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    parts, total = [], 0
    order = rng.permutation(len(SENTENCES))
    i = 0
    while total < a.seconds * RATE:
        pause = np.zeros(int(rng.uniform(0.3, 2.0) * RATE))
        speech = speak(SENTENCES[order[i % len(order)]], VOICES[rng.integers(0, len(VOICES))],
                       int(rng.integers(130, 200)), int(rng.integers(30, 70)))
        speech *= rng.uniform(0.2, 0.9) / (np.max(np.abs(speech)) + 1e-12)
        segment = np.concatenate([pause, speech])
        level = np.sqrt(np.mean(speech ** 2)) * 10 ** (-rng.uniform(10, 35) / 20)
        parts.append(segment + level * noise(rng, len(segment)))
        total += len(segment)
        i += 1
    signal = np.concatenate(parts)[: int(a.seconds * RATE)]
    np.save(a.out, np.clip(signal, -1, 1).astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
