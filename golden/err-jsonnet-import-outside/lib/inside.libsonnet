{ name: 'fine' }
