/**
 * Prover pool layout: the default (one thread per core; single-threaded curves with the native
 * kernels, multi-threaded up to 4 cores with the wasm ones) and
 * the operator's override (`proverCurve` / REFRACT_PROVER_CURVE / --prover-curve, `refract prover --curve`).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.ts';
import { MULTI_THREADED_CURVES_MAX_CORES, defaultPoolLayout, singleThreadFor } from '../src/prover/run/pool.ts';
import { proverKernels } from '../src/prover/engine/snark.ts';

describe('prover pool layout', () => {
  it('defaults to one thread per core: single-threaded curves with the native kernels; with the wasm ones multi-threaded up to 4 cores', () => {
    for (const cores of [1, 2, 4, 16]) expect(defaultPoolLayout(cores, 'native')).toEqual({ size: cores, singleThread: true });
    expect(defaultPoolLayout(1, 'wasm')).toEqual({ size: 1, singleThread: false });
    expect(defaultPoolLayout(2, 'wasm')).toEqual({ size: 2, singleThread: false });
    expect(defaultPoolLayout(MULTI_THREADED_CURVES_MAX_CORES, 'wasm')).toEqual({ size: 4, singleThread: false });
    expect(defaultPoolLayout(16, 'wasm')).toEqual({ size: 16, singleThread: true });
    expect(defaultPoolLayout(2)).toEqual(defaultPoolLayout(2, proverKernels()));
  });

  it('maps the curve choice to the pool option (auto leaves it to the default layout)', () => {
    expect(singleThreadFor('single')).toBe(true);
    expect(singleThreadFor('multi')).toBe(false);
    expect(singleThreadFor('auto')).toBeUndefined();
    expect(singleThreadFor(undefined)).toBeUndefined();
  });

  it('proverCurve comes from env or flags, defaults to auto and rejects other values', () => {
    expect(loadConfig({ env: {} }).proverCurve).toBe('auto');
    expect(loadConfig({ env: { REFRACT_PROVER_CURVE: 'single' } }).proverCurve).toBe('single');
    expect(loadConfig({ env: { REFRACT_PROVER_CURVE: 'single' }, flags: { proverCurve: 'multi' } }).proverCurve).toBe('multi');
    expect(() => loadConfig({ env: {}, flags: { proverCurve: 'fast' } })).toThrow(/proverCurve/);
  });

  it('proverKernels comes from env or flags (native | wasm), absent by default, and rejects other values', () => {
    expect(loadConfig({ env: {} }).proverKernels).toBeUndefined();
    expect(loadConfig({ env: { REFRACT_PROVER_KERNELS: 'wasm' } }).proverKernels).toBe('wasm');
    expect(loadConfig({ env: { REFRACT_PROVER_KERNELS: 'wasm' }, flags: { proverKernels: 'native' } }).proverKernels).toBe('native');
    expect(() => loadConfig({ env: {}, flags: { proverKernels: 'gpu' } })).toThrow(/proverKernels/);
  });
});
