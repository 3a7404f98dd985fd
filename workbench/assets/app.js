/* global document, location, fetch, FormData, URL */
// The workbench's only script, served by the app. Forms marked data-api post JSON to the API with
// the page's CSRF token; the sign-in form opens a session; the bulk form acts on the selection.
(function () {
  'use strict';
  var csrf = function () {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.getAttribute('content') : '';
  };
  function send(method, url, body) {
    return fetch(url, {
      method: method,
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf() },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(function (res) {
      if (res.ok) return res.status === 204 ? null : res.json();
      return res
        .json()
        .catch(function () {
          return { message: res.status + ' ' + res.statusText };
        })
        .then(function (e) {
          throw new Error(e.message || 'request refused');
        });
    });
  }
  function showError(form, error) {
    var el = form.querySelector('[data-error]');
    if (el) el.textContent = error.message;
  }
  // A request of a form's: the page reloads when it succeeds (or `then` takes the answer); an
  // error shows in the form.
  function act(form, request, then) {
    request
      .then(
        then ||
          function () {
            location.reload();
          },
      )
      .catch(function (e) {
        showError(form, e);
      });
  }
  // The ids of a comma-separated list, without blanks.
  function list(text) {
    return String(text || '')
      .split(',')
      .map(function (x) {
        return x.trim();
      })
      .filter(function (x) {
        return x !== '';
      });
  }
  function fields(form) {
    var out = {};
    new FormData(form).forEach(function (v, k) {
      out[k] = v;
    });
    return out;
  }
  // The preview form: the pasted settings file, else one entry per row that names a currency.
  function previewOf(form) {
    var file = form.querySelector('[name="settings_file"]').value;
    if (file.trim() !== '') return { settings_file: file };
    var rows = [];
    Array.prototype.forEach.call(form.querySelectorAll('.proposal-row'), function (row) {
      var value = function (name) {
        return row.querySelector('[name="' + name + '"]').value.trim();
      };
      if (value('currency') === '') return;
      var entry = { account: value('account'), currency: value('currency') };
      ['amount_tolerance_cents', 'date_lag_business_days', 'write_off_limit_cents'].forEach(function (k) {
        if (value(k) !== '') entry[k] = Number(value(k));
      });
      rows.push(entry);
    });
    var note = form.querySelector('[name="note"]').value.trim();
    return note === '' ? { tolerances: rows } : { note: note, tolerances: rows };
  }
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (form.id === 'sign-in') {
      event.preventDefault();
      var f = fields(form);
      fetch('/api/session', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: f.username, password: f.password }),
      }).then(function (res) {
        if (res.ok) {
          // The server sends a path of this site; checked again here, as the browser resolves it.
          var next = new URL(form.getAttribute('data-next') || '/', location.origin);
          location.href = next.origin === location.origin ? next.href : '/';
          return;
        }
        return res.json().then(function (e) {
          showError(form, new Error(e.message));
        });
      });
      return;
    }
    if (form.hasAttribute('data-api')) {
      event.preventDefault();
      var body = fields(form);
      if ('user' in body && body.user === '') body.user = null;
      act(form, send('POST', form.getAttribute('data-api'), body));
      return;
    }
    if (form.hasAttribute('data-match')) {
      event.preventDefault();
      var m = fields(form);
      var match = {
        account: form.getAttribute('data-account') || undefined,
        provider_transaction_ids: list(m.provider_transaction_ids),
        ledger_merchant_transaction_ids: list(m.ledger_merchant_transaction_ids),
        note: m.note || '',
      };
      if (m.write_off_cents) match.write_off_cents = Number(m.write_off_cents);
      act(form, send('POST', '/api/matches', match));
      return;
    }
    if (form.hasAttribute('data-preview')) {
      event.preventDefault();
      act(form, send('POST', '/api/tolerances/previews', previewOf(form)), function (job) {
        location.href = job.page;
      });
      return;
    }
    if (form.hasAttribute('data-undo')) {
      event.preventDefault();
      act(form, send('DELETE', form.getAttribute('data-undo'), { note: fields(form).note || '' }));
      return;
    }
    if (form.hasAttribute('data-bulk')) {
      event.preventDefault();
      var b = fields(form);
      var payload = { action: b.action, note: b.note || '', user: b.user || null };
      if (b.all) payload.filter = JSON.parse(b.filter || '{}');
      else {
        payload.ids = Array.prototype.map.call(
          document.querySelectorAll('input[name="ids"]:checked'),
          function (c) {
            return Number(c.value);
          },
        );
        if (payload.ids.length === 0) {
          showError(form, new Error('select rows first, or tick "everything this filter matches"'));
          return;
        }
      }
      act(form, send('POST', '/api/discrepancies/bulk', payload));
    }
  });
  // A ticked candidate joins the ids of its side in the match form; unticked, it leaves them.
  document.addEventListener('change', function (event) {
    var box = event.target;
    if (!box || !box.classList || !box.classList.contains('candidate-pick')) return;
    var input = document.getElementById(
      box.getAttribute('data-side') === 'provider' ? 'match-provider' : 'match-ledger',
    );
    if (!input) return;
    var ids = list(input.value).filter(function (x) {
      return x !== box.value;
    });
    if (box.checked) ids.push(box.value);
    input.value = ids.join(', ');
  });
  document.addEventListener('click', function (event) {
    if (event.target && event.target.id === 'sign-out') {
      send('DELETE', '/api/session').finally(function () {
        location.href = '/sign-in';
      });
    }
  });
})();
