/** The time, injected so that use cases are testable. */
export interface Clock {
  now(): Date;
}
