import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sharedPrefixPrompts } from '../src/cli/commands/bench-prefix.ts';
import { PrefixHomes } from '../src/core/dispatch/prefix-homes.ts';
import { prefixSlot } from '../src/core/index.ts';

const documentOf = (prompt: string) => prompt.slice(0, prompt.indexOf('.'));

describe('prefix-aware homes: consistent hashing with bounded loads, counted in prefixes', () => {
  it('8 shared documents over 8 endpoints: one each, where hashing alone piles them on fewer', () => {
    const prompts = sharedPrefixPrompts(400, 8, 1_000);
    const hashed = new Map<string, number>();
    for (const p of prompts) hashed.set(documentOf(p), prefixSlot(p, 8));
    // The cause this fixes: the hash alone leaves endpoints with no document and others with several.
    assert.ok(new Set(hashed.values()).size < 8, `hashing alone: ${[...hashed.values()].join(' ')}`);
    const homes = new PrefixHomes(8);
    const placed = new Map<string, Set<number>>();
    for (const p of prompts) placed.set(documentOf(p), (placed.get(documentOf(p)) ?? new Set()).add(homes.of(p)));
    assert.equal(placed.size, 8);
    for (const [doc, at] of placed) assert.equal(at.size, 1, `${doc} on one endpoint`);
    assert.equal(new Set([...placed.values()].map((s) => [...s][0])).size, 8, 'each document on its own endpoint');
    // The first document seen keeps its hashed endpoint.
    assert.equal(homes.of(prompts[0]!), prefixSlot(prompts[0]!, 8));
  });

  it('any number of prefixes: no endpoint owns more than its even share of those seen so far', () => {
    for (const [count, endpoints] of [[37, 5], [1_000, 16], [3, 7]] as const) {
      const homes = new PrefixHomes(endpoints);
      const owned = new Array<number>(endpoints).fill(0);
      for (let i = 0; i < count; i++) {
        owned[homes.of(`Prefix ${i} ${'x'.repeat(300)}`)]!++;
        assert.ok(Math.max(...owned) <= Math.ceil((i + 1) / endpoints), `${i + 1} prefixes over ${endpoints}: ${owned.join(' ')}`);
      }
    }
  });

  it('the same prefixes in the same order land the same way, and prompts differing after 256 characters share a home', () => {
    const list = Array.from({ length: 50 }, (_, i) => `Prefix ${i % 10} ${'y'.repeat(300)} question ${i}`);
    const a = new PrefixHomes(6);
    const b = new PrefixHomes(6);
    assert.deepEqual(list.map((p) => a.of(p)), list.map((p) => b.of(p)));
    assert.equal(a.of(list[0]!), a.of(list[10]!));
  });
});
