import { floodBodies } from './flood';
import { messageIdOf } from './payloads';

describe('the flood', () => {
  it('sends fresh messageIds the bench can find again, each with a unique 512-character userId, the costliest shape', () => {
    const bodyOf = floodBodies('run-7-0', 2);
    const calls = (counter: number) =>
      (JSON.parse(bodyOf(counter)) as { batch: { messageId: string; userId: string; type: string }[] }).batch;
    expect(calls(3).map((c) => c.messageId)).toEqual([messageIdOf('run-7-0', 3, 0), messageIdOf('run-7-0', 3, 1)]);
    expect(calls(123_456).map((c) => c.messageId)).toEqual([messageIdOf('run-7-0', 123_456, 0), messageIdOf('run-7-0', 123_456, 1)]);
    const userIds = [...calls(3), ...calls(4), ...calls(123_456)].map((c) => c.userId);
    for (const id of userIds) expect(id).toHaveLength(512);
    expect(new Set(userIds).size).toBe(userIds.length);
    expect(calls(3).every((c) => c.type === 'track')).toBe(true);
  });
});
