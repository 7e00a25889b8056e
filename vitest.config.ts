import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'statemachines',
          include: ['test/statemachines/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'integration',
          // The deployment rehearsal needs the same environment (moto; it starts its own cluster).
          include: ['test/integration/**/*.test.ts', 'test/rehearsal/**/*.test.ts'],
          globalSetup: ['test/env/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          pool: 'forks',
          maxWorkers: 2,
          // After the fast projects: a broken environment must not hide their signal.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
