import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalKeyWrapper } from '../../../../shared/adapters/local-key-wrapper.js';
import { LifeboatError } from '../../../../shared/domain/errors.js';

const context = { 'lifeboat:repository': '00'.repeat(16) };

describe('the local key file', () => {
  it('is created once, private, and wraps a data key the same file unwraps later', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'keys-')), 'lifeboat', 'repository.key');
    const first = await LocalKeyWrapper.fromFile(path, { create: true });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await readFile(path, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
    const key = await first.generateDataKey({ context });
    expect(key.plaintext).toHaveLength(32);
    expect(Buffer.from(key.wrapped).includes(Buffer.from(key.plaintext))).toBe(false);

    const again = await LocalKeyWrapper.fromFile(path);
    expect(again.keyId).toBe(first.keyId);
    expect(Buffer.from(await again.unwrap({ wrapped: key.wrapped, context }))).toEqual(
      Buffer.from(key.plaintext),
    );
  });

  it('refuses to unwrap under another context or with another key, naming neither key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keys-'));
    const wrapper = await LocalKeyWrapper.fromFile(join(dir, 'a.key'), { create: true });
    const { wrapped } = await wrapper.generateDataKey({ context });
    await expect(
      wrapper.unwrap({ wrapped, context: { 'lifeboat:repository': '11'.repeat(16) } }),
    ).rejects.toThrow(/does not unwrap/);
    const other = await LocalKeyWrapper.fromFile(join(dir, 'b.key'), { create: true });
    await expect(other.unwrap({ wrapped, context })).rejects.toThrow(other.keyId);
  });

  it('refuses a file that does not hold a key', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'keys-')), 'bad.key');
    await writeFile(path, 'not a key\n');
    await expect(LocalKeyWrapper.fromFile(path)).rejects.toThrow(/does not hold 64 hex digits/);
  });

  it('never makes up a key for an existing repository: a missing file is an error naming it, and nothing is created', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'keys-')), 'lifeboat', 'repository.key');
    await expect(LocalKeyWrapper.fromFile(path)).rejects.toThrow(
      `the repository key file ${path} does not exist: give this repository's key file with --repository-key-file`,
    );
    await expect(LocalKeyWrapper.fromFile(path, { create: false })).rejects.toBeInstanceOf(LifeboatError);
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });
  it('asks whether it may make a key up only when the file is missing', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'keys-')), 'repository.key');
    const asked: string[] = [];
    const mayCreate = (answer: boolean) => async (): Promise<boolean> => {
      asked.push(`asked: ${answer}`);
      return answer;
    };

    await expect(LocalKeyWrapper.fromFile(path, { create: mayCreate(false) })).rejects.toThrow(
      /does not exist/,
    );
    const made = await LocalKeyWrapper.fromFile(path, { create: mayCreate(true) });
    const again = await LocalKeyWrapper.fromFile(path, { create: mayCreate(true) });

    expect(asked).toEqual(['asked: false', 'asked: true']);
    expect(again.keyId).toBe(made.keyId);
  });
});
