/** Polls a condition until it holds, failing with a message naming what was awaited. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 250));
  }
  throw new Error(`timed out waiting for ${what}`, { cause: lastError });
}
