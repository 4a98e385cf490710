// Reading a file of the machine running virtc.
{ passwd: importstr '/etc/passwd' }
