/** asl-validator ships no type declarations; this is the part of its API the tests use. */
declare module 'asl-validator' {
  interface ValidationResult {
    readonly isValid: boolean;
    readonly errors: readonly unknown[];
    errorsText(separator?: string): string;
  }
  export default function aslValidator(
    definition: unknown,
    options?: { checkPaths?: boolean; checkArn?: boolean },
  ): ValidationResult;
}
