import { describe, expect, it } from 'vitest';
import { parseTagHeader } from './tagObject.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const OID = '2aa3b76517dc5410d2eda6e8a743682ab44041b5';

describe('parseTagHeader', () => {
  it('reads the object, its kind and the name from the header git writes', () => {
    const tag = `object ${OID}\ntype commit\ntag v1.0.0\ntagger Ada <a@b> 1700000060 +0000\n\nVersion 1.0.0\n`;
    expect(parseTagHeader(bytes(tag))).toEqual({ object: OID, type: 'commit', name: 'v1.0.0' });
  });

  it('returns the name as claimed, whatever it holds: callers check it as a ref name', () => {
    const tag = `object ${OID}\ntype commit\ntag ../../config\ntagger A <a> 1 +0000\n\nx\n`;
    expect(parseTagHeader(bytes(tag))?.name).toBe('../../config');
  });

  it('refuses headers git would not write', () => {
    for (const tag of [
      '',
      `object ${OID}\ntype commit\n`,
      `type commit\nobject ${OID}\ntag v1\n\n`,
      `object ${OID.toUpperCase()}\ntype commit\ntag v1\n\n`,
      `object ${OID}\ntype commit\ntag \n\n`,
      `object ${OID.slice(1)}\ntype commit\ntag v1\n\n`,
    ]) {
      expect(parseTagHeader(bytes(tag)), JSON.stringify(tag)).toBeNull();
    }
  });
});
