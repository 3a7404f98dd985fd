import { describe, expect, it } from 'vitest';
import { cannotShowPage, errorPage } from '../../workbench/pages/error.ts';

// One error page for the workbench's browser answers (issue 27): a page with no address, an unknown
// discrepancy and an address its page cannot show all say why in #error-message, with a way back.
describe('the workbench error page', () => {
  it('says what happened in #error-message, with the way back to the worklist by default', () => {
    const body = errorPage(null, 'Page not found', 'There is no page at /nowhere.');
    expect(body).toContain('<h1>Page not found</h1>');
    expect(body).toContain(
      '<p id="error-message" class="error" role="alert">There is no page at /nowhere.</p>',
    );
    expect(body).toContain('<a href="/">Back to the worklist</a>');
  });

  it('leads back from an address its page cannot show to the same page without the query', () => {
    const body = cannotShowPage(null, 'min_cents: give a whole number', '/runs?min_cents=<b>ten</b>');
    expect(body).toContain('<h1>Cannot show this page</h1>');
    expect(body).toContain(
      '<p id="error-message" class="error" role="alert">min_cents: give a whole number</p>',
    );
    expect(body).toContain('<a href="/runs">Start again from /runs</a>');
    // Another site's address is never a way back.
    expect(cannotShowPage(null, 'x', '//evil.example/runs?a=1')).toContain('<a href="/">');
  });
});
