// A local stand-in for an OpenAI-compatible chat-completions endpoint, for the
// Playwright spec of the optional language model (llm.spec.ts). It is the only thing
// in the browser suite that is not a real part: an external HTTP service we cannot run
// here. It replays fixed replies chosen by what Clarion sent:
//   - a question's unknown word "flubbery" → one clarification with two typed options;
//   - a free-text clarification answer mentioning infection → one typed piece;
//   - anything else → a plan with no pieces (the model could not read it).
// It also records every request body, served back on GET /requests, so the spec can
// check what left the host.
import http from 'node:http';

const port = Number(process.env.LLM_STAND_IN_PORT ?? 3125);
const seen = [];

function completion(content) {
  return {
    id: 'chatcmpl-stand-in',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(content) }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 700, completion_tokens: 112, total_tokens: 812 },
  };
}

const areaOver15 = { kind: 'compare', attribute: 'wounds.latest_area', op: 'gt', value: 15, unit: 'cm2' };
const infected = { kind: 'in_set', attribute: 'wounds.infected', values: [true] };

function reply(body) {
  const messages = body?.messages ?? [];
  const system = messages[0]?.content ?? '';
  const user = messages[messages.length - 1]?.content ?? '';
  let input = {};
  try {
    input = JSON.parse(user);
  } catch {
    // not JSON: read it as text below
  }
  const answering = system.includes("answer to one of its") || 'answer' in input;
  if (answering) {
    const text = String(input.answer ?? user).toLowerCase();
    if (text.includes('infect') || text.includes('smell')) {
      return { kind: 'plan', pieces: [{ word: String(input.word ?? ''), label: 'Infected', constraint: infected }] };
    }
    return { kind: 'plan', pieces: [] };
  }
  if (user.includes('flubbery')) {
    return {
      kind: 'clarification',
      word: 'flubbery',
      question: 'By “flubbery”, do you mean large or infected wounds?',
      options: [
        { label: 'Latest area above 15 cm²', description: 'large now', default: true, constraint: areaOver15 },
        { label: 'Infected', description: 'infection recorded', default: false, constraint: infected },
      ],
    };
  }
  return { kind: 'plan', pieces: [] };
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url.endsWith('/models')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'stand-in-7b', object: 'model' }] }));
    return;
  }
  if (req.method === 'GET' && req.url === '/requests') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(seen));
    return;
  }
  if (req.method === 'GET' && req.url === '/healthz') {
    res.writeHead(200);
    res.end('ok');
    return;
  }
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
    res.writeHead(404);
    res.end('not found');
    return;
  }
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    let body = null;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400);
      res.end('bad json');
      return;
    }
    seen.push(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(completion(reply(body))));
  });
});

server.listen(port, '127.0.0.1', () => console.log(`llm stand-in on 127.0.0.1:${port}`));
