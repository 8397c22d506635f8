import { describe, expect, it } from 'vitest';
import { humanize, rememberNames } from './names';

describe('humanize: no internal ids in what a person reads', () => {
  it('names what the dashboard knows and says a plain word for the rest', () => {
    rememberNames([
      { id: 'grp_0mws32gm9ged4s8', name: 'Demo group' },
      { id: 'acc_0mws32gm9ged4s9', name: 'Demo Master' },
    ]);
    expect(humanize('group grp_0mws32gm9ged4s8 already has a Master (acc_0mws32gm9ged4s9); move it out first')).toBe(
      '“Demo group” already has a Master (“Demo Master”); move it out first',
    );
    expect(
      humanize(
        'panic-close job job_0mwsabcdef12 is running on account acc_0mwsunknown1; resume is refused until it ends',
      ),
    ).toBe('a panic-close job is running on an account; resume is refused until it ends');
    expect(humanize('nothing to replace in acc_ or grp_x')).toBe('nothing to replace in acc_ or grp_x');
  });
});
