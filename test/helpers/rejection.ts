import { expect } from 'vitest';

/**
 * The error `p` rejects with, checked to be an instance of `type`; throws when `p` resolves. For
 * tests that look at an error's fields (code, message) after the rejection.
 */
export async function rejection<E extends Error>(p: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(type);
    return e as E;
  }
  throw new Error('expected a rejection');
}
