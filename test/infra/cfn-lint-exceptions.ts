/**
 * The one place where cfn-lint findings on Lifeboat's templates are accepted, each with its
 * reason. Anything cfn-lint reports that no entry here matches fails the template checks
 * (test/infra/synth.test.ts), and so does an entry that matches nothing any more.
 */
export interface LintException {
  readonly rule: string;
  /** Matches the finding's message. */
  readonly message: RegExp;
  readonly reason: string;
}

export const CFN_LINT_EXCEPTIONS: readonly LintException[] = [
  {
    rule: 'E3601',
    message: /'OutputPath' was unexpected\) at 'States\/(BackupDone|RestoreDone|DryRunDone)\/OutputPath'/,
    reason:
      'The Amazon States Language allows InputPath and OutputPath on a Succeed state; cfn-lint 1.58 ' +
      'schema for Succeed states omits them. asl-validator (test/statemachines) checks the definitions.',
  },
  {
    rule: 'W3005',
    message: /dependency already enforced by a 'GetAtt'/,
    reason:
      "CDK adds a DependsOn on a Lambda function's or state machine's role (and its default policy) " +
      'so the policy exists before the first invocation; the redundancy with the GetAtt is harmless.',
  },
];
