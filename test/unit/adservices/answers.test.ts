import fc from 'fast-check';
import { type AdServicesAnswers, answersByIndex, answersWithout } from '../../../functions/domain/adservices/answers';

describe("taking lines' answers out of an answers object", () => {
  it('keeps every other answer under its own index, in order', () => {
    fc.assert(
      fc.property(
        fc
          .uniqueArray(fc.nat(200))
          .chain((indexes) => fc.tuple(fc.constant(indexes.sort((a, b) => a - b)), fc.subarray(indexes), fc.array(fc.nat(200)))),
        ([indexes, removed, unrelated]) => {
          const answers: AdServicesAnswers = {
            version: 1,
            answers: indexes.map((index) => ({ index, outcome: index % 2 === 0 ? 'not_attributed' : 'bad_token' })),
          };
          const gone = new Set([...removed, ...unrelated]);
          const left = answersWithout(answers, gone);
          // Oracle: an answer stays exactly when its index is not taken out, with its outcome unchanged.
          const expected = new Map(indexes.filter((index) => !gone.has(index)).map((index) => [index, answersByIndex(answers).get(index)]));
          expect(answersByIndex(left)).toEqual(expected);
          expect(left.answers.map((answer) => answer.index)).toEqual([...expected.keys()]);
          expect(left.version).toBe(1);
        },
      ),
    );
  });
});
