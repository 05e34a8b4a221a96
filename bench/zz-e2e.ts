import { startLocalStack } from '../test/support/local-stack';
import { endToEndFigures } from './end-to-end';

async function main() {
  const stack = await startLocalStack({ trustProxy: true, onError: (error) => console.error(error) });
  try {
    await endToEndFigures((label, value) => console.log(label, value), stack);
  } finally {
    await stack.stop();
  }
}
void main();
