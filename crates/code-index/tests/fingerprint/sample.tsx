// A component file for TSX extraction.
import React, { useState } from 'react';
import { Store } from './store';

interface Props { store: Store; title: string }

export function Panel({ store, title }: Props) {
  const [count, setCount] = useState(0);
  const onClick = () => setCount(store.next(count));
  return <div className="panel" onClick={onClick}>{title}: {count}</div>;
}

export class Board extends React.Component<Props> {
  render() {
    const s = new Store('b');
    s.open();
    return <Panel store={s} title={this.props.title} />;
  }
}
