// The real photos the check is chosen on (tools/calibration/real-photos.ts) and the rule of choice (tools/calibration/calibrate.ts):
// an operator's folder is read as bench:photos reads it, every shared photo has a kind of scene and subject,
// and among checks the one giving away at most 5% of good results wins before the one catching more.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { maskedPhotos, sceneOf, subjectOf } from '../../tools/calibration/real-photos.ts';
import { better, crossValidate } from '../../tools/calibration/calibrate.ts';

describe('real photos for the check', () => {
  it("reads an operator's folder: name.jpg beside name.mask.png or name.gt.png, one subfolder deep", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'matte-real-'));
    for (const f of [
      'a.jpg',
      'a.mask.png',
      'lonely.jpg',
      'sub/b.png',
      'sub/b.gt.png',
      'sub/deep/c.jpg',
      'sub/deep/c.mask.png',
    ]) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), '');
    }
    expect(maskedPhotos(dir)).toEqual([
      { id: 'a', image: 'a.jpg', mask: 'a.mask.png' },
      { id: 'sub/b', image: 'sub/b.png', mask: 'sub/b.gt.png' },
    ]);
    fs.rmSync(dir, { recursive: true });
  });

  it('gives each shared photo a kind of scene and of subject', () => {
    expect(sceneOf('grabcut-banana1')).toBe('studio backdrop');
    expect(sceneOf('grabcut-banana2')).toBe('busy indoor');
    expect(sceneOf('alphamatting-gt26')).toBe('busy indoor');
    expect(sceneOf('alphamatting-gt05')).toBe('busy outdoor');
    expect(sceneOf('wzhorse-horse001')).toBe('busy outdoor');
    expect(sceneOf('cleargrasp-000000153')).toBe('studio backdrop');
    expect(subjectOf('person')).toBe('people');
    expect(subjectOf('animal')).toBe('animals');
    expect(subjectOf('transparent')).toBe('transparent');
    expect(subjectOf('hair')).toBe('products and objects');
  });
});

describe('the rule of choice', () => {
  it('takes at most 5% of good results flagged first, then the most broken caught, then the fewest flagged', () => {
    const cautious = { recall: 0.7, alarms: 0.04 };
    const eager = { recall: 0.95, alarms: 0.06 };
    expect(better(cautious, eager)).toBe(true);
    expect(better(eager, cautious)).toBe(false);
    expect(better({ recall: 0.75, alarms: 0.05 }, cautious)).toBe(true);
    expect(better({ recall: 0.7, alarms: 0.02 }, cautious)).toBe(true);
    expect(better({ recall: 0.7, alarms: 0.04 }, cautious)).toBe(false);
    // With none at 5% or under, the fewest flagged.
    expect(better({ recall: 0.5, alarms: 0.07 }, { recall: 0.9, alarms: 0.08 })).toBe(true);
    expect(better(cautious, null)).toBe(true);
  });

  it("counts the held-out verdicts a real photo's re-save turns, and only photos that have a re-save", () => {
    // One measure: broken results high, clean ones low. Every real photo has a re-save that moves it a little,
    // but one clean photo's re-save moves it far over any bar.
    const sample = (i: number, real: boolean) => {
      const broken = i % 4 === 0;
      const a = broken ? 5 + (i % 3) : i % 5;
      return {
        id: `${real ? 'real' : 'c'}${i}`,
        group: `g${i}`,
        source: 'alphamatting',
        family: real ? 'real photo' : 'white',
        iou: broken ? 0.5 : 0.99,
        ruled: false,
        f: { a },
        ...(real && {
          real: { folder: 'real-photos', scene: 'busy outdoor', subject: 'animals' },
          resaved: { f: { a: i === 1 ? 50 : a + 0.01 }, ruled: false },
        }),
      };
    };
    const samples = [
      ...Array.from({ length: 60 }, (_, i) => sample(i, false)),
      ...Array.from({ length: 40 }, (_, i) => sample(i, true)),
    ];
    const { flips } = crossValidate(samples, ['a'], { lambda: 0.02, realShare: 0.02 });
    expect(flips).toEqual({ photos: 40, flipped: 1 });
  });
});
