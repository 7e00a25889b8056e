/** CDK app entry: `npx cdk synth` (cdk.json) or `npm run synth`. */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { LifeboatStack } from '../lifeboat-stack.js';

const app = new App();
new LifeboatStack(app, 'Lifeboat', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
